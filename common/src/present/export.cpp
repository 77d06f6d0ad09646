// --export: .npy files plus manifest.json, written atomically (see attn/present/export.hpp).
#include "attn/present/export.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"

namespace fs = std::filesystem;

namespace attn {

bool valid_export_name(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

void ExportRecorder::add(const std::string& name, const Shape& shape, const float* data, int step) {
  if (!valid_export_name(name)) throw ExportError(fmt::format("export: '{}' is not a valid tensor name", name));
  if (has(name)) throw ExportError(fmt::format("export: tensor '{}' recorded twice", name));
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  tensors_.push_back({name, shape, std::vector<float>(data, data + n), step});
}

bool ExportRecorder::has(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return true;
  return false;
}

void ExportRecorder::set_manifest_field(const std::string& key, const std::string& json_value) {
  if (key == "chapter" || key == "seed" || key == "tensors") throw ExportError("manifest key \"" + key + "\" is reserved");
  if (!nlohmann::json::accept(json_value)) throw ExportError("manifest field \"" + key + "\" is not valid JSON");
  for (auto& f : fields_)
    if (f.first == key) {
      f.second = json_value;
      return;
    }
  fields_.emplace_back(key, json_value);
}

void prepare_export_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw ExportError(fmt::format("--export: {} exists and is not a folder", dir));
  fs::create_directories(dir, ec);
  if (ec) throw ExportError(fmt::format("--export: cannot create folder {}: {}", dir, ec.message()));
  const fs::path probe = fs::path(dir) / fmt::format(".attn-probe-{}", ::getpid());
  {
    std::ofstream f(probe);
    if (!f) throw ExportError(fmt::format("--export: folder {} is not writable", dir));
  }
  fs::remove(probe, ec);
}

void ExportRecorder::write(const std::string& dir, const std::string& chapter, std::uint64_t seed) const {
  prepare_export_dir(dir);
  const fs::path staging = fs::path(dir) / fmt::format(".attn-export-{}", ::getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging);
  nlohmann::json manifest = {{"chapter", chapter}, {"seed", seed}, {"tensors", nlohmann::json::array()}};
  for (const auto& [key, value] : fields_) manifest[key] = nlohmann::json::parse(value);  // e.g. "config"
  try {
    for (const auto& t : tensors_) {
      const std::string file = t.name + ".npy";
      write_npy((staging / file).string(), t.data.data(), t.shape);
      manifest["tensors"].push_back({{"name", t.name}, {"file", file}, {"shape", t.shape}, {"step", t.step}});
    }
    std::ofstream m(staging / "manifest.json");
    m << manifest.dump(2) << "\n";
    m.close();
    if (!m) throw ExportError("could not write manifest.json");
    // Move into place: tensors first, the manifest last (its presence means "complete").
    fs::remove(fs::path(dir) / "manifest.json", ec);
    for (const auto& t : tensors_) fs::rename(staging / (t.name + ".npy"), fs::path(dir) / (t.name + ".npy"));
    fs::rename(staging / "manifest.json", fs::path(dir) / "manifest.json");
    fs::remove_all(staging, ec);
  } catch (const std::exception& e) {
    fs::remove_all(staging, ec);
    throw ExportError(fmt::format("--export {}: {}", dir, e.what()));
  }
}

}  // namespace attn

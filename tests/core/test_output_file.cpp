// Writing only what is ours (attn/data/output_file.hpp, attn/present/export.hpp): a FIFO, a socket,
// a folder or a device node planted in a temporary folder is never replaced; a link is followed;
// a killed run's temporary files are removed by the next write; an export replaces only an earlier
// export of this program, never a folder of someone's .npy/.json files nor the shipped data; the
// files of chapter 09's model are accepted only as one set; --train (attn/present/load_or_train.hpp,
// chapter 12's train_recall_suite) checks its targets before any training. Nothing here touches the
// machine's own /dev or the checkout's data/.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attn/data/bpe.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/present/checkpoint_set.hpp"
#include "attn/present/export.hpp"
#include "attn/present/load_or_train.hpp"
#include "attn/studies/recall.hpp"
#include "attn/studies/tiny_lm.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace output_file_test {

// An environment variable as the suite found it, put back when the test case ends (the learner's
// ATTN_DATA_DIR, if any, must reach the later cases unchanged).
struct KeepEnv {
  explicit KeepEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) value_ = v;
  }
  ~KeepEnv() {
    if (value_) ::setenv(name_, value_->c_str(), 1);
    else ::unsetenv(name_);
  }
  KeepEnv(const KeepEnv&) = delete;
  KeepEnv& operator=(const KeepEnv&) = delete;
  const char* name_;
  std::optional<std::string> value_;
};

fs::path fresh(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("attn-out-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

mode_t type_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// A listening-less Unix socket bound at p (the file stays after close).
void plant_socket(const fs::path& p) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, p.c_str(), sizeof a.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  ::close(fd);
}

// The pid of a process that has exited (forked and reaped): no process has it now.
long dead_pid() {
  const pid_t c = ::fork();
  if (c == 0) ::_exit(0);
  int st = 0;
  ::waitpid(c, &st, 0);
  return long(c);
}

// Which of the three callbacks ran, and with what.
struct Calls {
  std::string loaded, saved;
  bool trained = false, got_callback = false;
};

bool run(const LoadOrTrain& how, Calls& c) {
  return load_or_train(
      how, [&](const std::string& p) { c.loaded = p; },
      [&](const StepCallback& on_step) {
        c.trained = true;
        c.got_callback = bool(on_step);
        if (on_step) on_step(1, 0.5, 10);
      },
      [&](const std::string& p) {
        c.saved = p;
        write_file_atomically(p, "model");
      });
}

}  // namespace output_file_test

using namespace output_file_test;

TEST_CASE("output file: a FIFO, a socket, a folder or a device is refused and stays what it was") {
  const fs::path d = fresh("special");
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0644) == 0);
  plant_socket(d / "sock");
  fs::create_directories(d / "dir");
  struct Case {
    std::string name;
    mode_t type;
    const char* says;
  };
  std::vector<Case> cases = {{"fifo", S_IFIFO, "FIFO"}, {"sock", S_IFSOCK, "socket"}, {"dir", S_IFDIR, "folder"}};
  if (::geteuid() == 0) {  // only root may make a device node (as the Quick start runs): the same as /dev/null
    REQUIRE(::mknod((d / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    cases.push_back({"null", S_IFCHR, "character device"});
  } else {
    MESSAGE("not root: the device-node case is not run (mknod needs root); FIFO, socket and folder are");
  }
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string p = (d / c.name).string();
    CHECK(output_file_problem(p).find(c.says) != std::string::npos);
    CHECK_THROWS_WITH_AS(write_file_atomically(p, "data"), doctest::Contains(c.says), OutputFileError);
    CHECK_THROWS_AS(write_safetensors(p, {{"x", TensorF32{{1}, {1.0f}}}}, {}), SafetensorsError);
    CHECK(type_of(p) == c.type);  // not renamed over, even as root
    // A link to it is followed, and refused the same way.
    fs::create_symlink(p, d / ("link-" + c.name));
    CHECK_THROWS_AS(write_file_atomically((d / ("link-" + c.name)).string(), "data"), OutputFileError);
    CHECK(type_of(p) == c.type);
    CHECK(type_of(d / ("link-" + c.name)) == S_IFLNK);
  }
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("output file: written whole, a link's file replaced, an empty name or missing folder refused") {
  const fs::path d = fresh("plain");
  write_file_atomically((d / "a.txt").string(), "one");
  write_file_atomically((d / "a.txt").string(), "two");
  CHECK(slurp(d / "a.txt") == "two");
  spit(d / "real.txt", "old");
  fs::create_symlink("real.txt", d / "link.txt");
  write_file_atomically((d / "link.txt").string(), "new");
  CHECK(slurp(d / "real.txt") == "new");           // the file the link names is replaced …
  CHECK(type_of(d / "link.txt") == S_IFLNK);       // … and the link stays a link
  CHECK(output_file_problem("").find("empty") != std::string::npos);
  CHECK(output_file_problem((d / "no" / "x.txt").string()).find("does not exist") != std::string::npos);
  CHECK(output_file_problem((d / "no" / "x.txt").string(), /*new_folder=*/true).empty());
  CHECK(output_file_problem((d / "no" / "deeper" / "x.txt").string(), true).find("does not exist") != std::string::npos);
  prepare_output_folder((d / "no" / "x.txt").string());
  CHECK(fs::is_directory(d / "no"));
  CHECK_FALSE(fs::exists(d / "no" / "x.txt"));
  fs::remove_all(d);
}

TEST_CASE("output file: a planted temporary name is never written through; a killed run's temporaries go") {
  const fs::path d = fresh("temps");
  spit(d / "victim.txt", "keep");
  const fs::path planted = d / ("out.bin.tmp." + std::to_string(::getpid()));
  fs::create_symlink(d / "victim.txt", planted);
  write_file_atomically((d / "out.bin").string(), "mine");
  CHECK(slurp(d / "victim.txt") == "keep");
  CHECK(slurp(d / "out.bin") == "mine");
  // Left by runs that were killed (their processes are gone): removed by the next write. A live
  // process's temporary (pid 1 runs as long as the machine does) and other files stay.
  const fs::path stale = d / ("out.bin.tmp." + std::to_string(dead_pid()));
  const fs::path live = d / "out.bin.tmp.1";
  spit(stale, "half");
  spit(live, "busy");
  spit(d / "out.bin.tmp.notes", "mine");
  write_file_atomically((d / "out.bin").string(), "again");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(d / "out.bin.tmp.notes"));
  fs::remove_all(d);
}

TEST_CASE("output set: nothing is renamed before commit; temporaries of a set not committed are removed") {
  const fs::path d = fresh("set");
  spit(d / "a", "old a");
  spit(d / "b", "old b");
  {
    OutputSet s;
    s.add((d / "a").string(), "new a");
    s.add((d / "b").string(), "new b");
    CHECK(slurp(d / "a") == "old a");  // staged, not yet in place
    CHECK_THROWS_AS(s.add((d / "a").string(), "twice"), OutputFileError);
  }  // never committed
  CHECK(slurp(d / "a") == "old a");
  CHECK(slurp(d / "b") == "old b");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(d)) entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries == 2);
  OutputSet s;
  s.add((d / "a").string(), "new a");
  s.add((d / "b").string(), "new b");
  s.commit();
  CHECK(slurp(d / "a") == "new a");
  CHECK(slurp(d / "b") == "new b");
  CHECK(fnv1a64_hex("") == "cbf29ce484222325");  // FNV-1a's offset basis: the published test vector
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");
  fs::remove_all(d);
}

TEST_CASE("export: only an earlier export of this program is replaced; never data/ nor someone's files") {
  const fs::path d = fresh("export");
  // A copy of the shipped goldens: .npy and .json files, but no export of ours.
  const fs::path goldens = d / "core";
  fs::copy(fs::path(require_data_file("golden/core/attn_q.npy")).parent_path(), goldens, fs::copy_options::recursive);
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(goldens)) n += e.is_regular_file() ? 1 : 0;
  REQUIRE(n > 3);
  CHECK_THROWS_WITH_AS(prepare_export_dir(goldens.string()), doctest::Contains("no manifest.json"), ExportError);
  spit(goldens / "manifest.json", "{\"chapter\": \"03\", \"seed\": 7, \"tensors\": []}");  // an old-style or forged one
  ++n;
  CHECK_THROWS_WITH_AS(prepare_export_dir(goldens.string()), doctest::Contains("not written by this program"), ExportError);
  std::size_t after = 0;
  for (const auto& e : fs::directory_iterator(goldens)) after += e.is_regular_file() ? 1 : 0;
  CHECK(after == n);
  // A folder of .npy/.json files with no manifest at all, and a hidden .attn- folder of the user's.
  fs::create_directories(d / "mine" / ".attn-mine");
  spit(d / "mine" / "notes.json", "{}");
  spit(d / "mine" / ".attn-mine" / "notes.txt", "mine");
  CHECK_THROWS_WITH_AS(prepare_export_dir((d / "mine").string()), doctest::Contains("no manifest.json"), ExportError);
  CHECK(fs::exists(d / "mine" / ".attn-mine" / "notes.txt"));
  // A missing folder is checked, not created: it appears only when the export is complete.
  prepare_export_dir((d / "out").string());
  CHECK_FALSE(fs::exists(d / "out"));
  // An earlier export is replaced; the same with a file the user added beside it is refused.
  ExportRecorder rec;
  const float x[2] = {1.0f, 2.0f};
  rec.add("scores", {2}, x, 1);
  rec.write((d / "out").string(), "03", 7);
  const nlohmann::json m = nlohmann::json::parse(slurp(d / "out" / "manifest.json"));
  CHECK(m["written_by"] == "attention_step_by_step");
  rec.write((d / "out").string(), "03", 7);  // replaced: its own export
  spit(d / "out" / "notes.json", "{\"mine\": 1}");
  CHECK_THROWS_WITH_AS(rec.write((d / "out").string(), "03", 7), doctest::Contains("'notes.json'"), ExportError);
  CHECK(slurp(d / "out" / "notes.json") == "{\"mine\": 1}");
  // The folder above must exist: only the export folder itself is created.
  CHECK_THROWS_WITH_AS(prepare_export_dir((d / "no" / "out").string()), doctest::Contains("does not exist"), ExportError);
  CHECK_FALSE(fs::exists(d / "no"));
  // The shipped data is never a target, not even a new folder inside it ($ATTN_DATA_DIR here: a copy).
  fs::create_directories(d / "data" / "ch03");
  const KeepEnv keep("ATTN_DATA_DIR");
  ::setenv("ATTN_DATA_DIR", (d / "data").c_str(), 1);
  CHECK_THROWS_WITH_AS(prepare_export_dir((d / "data" / "ch03" / "new").string()), doctest::Contains("shipped data"),
                       ExportError);
  CHECK_THROWS_WITH_AS(prepare_export_dir((d / "data").string()), doctest::Contains("shipped data"), ExportError);
  CHECK_FALSE(fs::exists(d / "data" / "ch03" / "new"));
  fs::remove_all(d);
}

TEST_CASE("data dir: with ATTN_DATA_DIR set, --train writes there or nowhere") {
  const KeepEnv keep("ATTN_DATA_DIR");
  const fs::path d = fresh("datadir");
  ::setenv("ATTN_DATA_DIR", d.c_str(), 1);
  CHECK(data_dir() == d.string());
  ::setenv("ATTN_DATA_DIR", (d / "missing").c_str(), 1);
  CHECK_THROWS_WITH_AS(data_dir(), doctest::Contains("is not a folder"), DataFileError);
  // A chapter's folder (one level too deep) is refused for writing as it is for reading: --train
  // would otherwise write data/ch05/ch05/…, which no later run reads.
  fs::create_directories(d / "ch05");
  spit(d / "ch05" / "rope.safetensors", "x");
  ::setenv("ATTN_DATA_DIR", (d / "ch05").c_str(), 1);
  CHECK_THROWS_WITH_AS(data_dir(), doctest::Contains("not one of them"), DataFileError);
  // A newline or escape in the variable is shown escaped: it cannot add a line to the message.
  ::setenv("ATTN_DATA_DIR", (d.string() + "/a\nb\x1b[31m").c_str(), 1);
  try {
    (void)data_dir();
    FAIL("a missing folder was accepted");
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("a\\nb\\x1b[31m") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find('\x1b') == std::string::npos);
  }
  CHECK(shown_path("x\ty\rz\x7f") == "x\\ty\\rz\\x7f");
  CHECK(shown_path("/plain/path ü") == "/plain/path ü");
  CHECK(missing_data_file_message("ch05/a", {{"/d\nx", "$ATTN_DATA_DIR"}}).find("/d\\nx") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("chapter 09's files are one set: a tokenizer or text from another run beside the model is refused") {
  const fs::path d = fresh("ch09set");
  for (const char* f : {"decoder_lm.safetensors", "tokenizer.json", "kjv_valid.txt", "training_curve.csv"})
    fs::copy_file(require_data_file(std::string("ch09/") + f), d / f);
  // The shipped model records the fingerprints of the three other shipped files, as --train writes them.
  Metadata meta;
  TensorMap t = read_safetensors((d / "decoder_lm.safetensors").string(), &meta);
  for (const char* f : {"tokenizer.json", "kjv_valid.txt", "training_curve.csv"}) {
    CAPTURE(f);
    REQUIRE(meta.count(std::string("set_fnv1a64_") + f));
    CHECK(meta.at(std::string("set_fnv1a64_") + f) == fnv1a64_hex(slurp(d / f)));
  }
  CHECK_NOTHROW(load_tiny_lm(d.string()));
  // A tokenizer of another run (same vocabulary size, other counts) beside it: refused, file named.
  BpeTokenizer other = bpe_load((d / "tokenizer.json").string());
  other.merges.front().count += 1;
  bpe_save((d / "tokenizer.json").string(), other);
  CHECK_THROWS_WITH(load_tiny_lm(d.string()), doctest::Contains("tokenizer.json does not belong to"));
  // A model without fingerprints (a learner's set made before they existed) is a legacy set: accepted.
  Metadata legacy = meta;
  for (const char* f : {"tokenizer.json", "kjv_valid.txt", "training_curve.csv"}) legacy.erase(std::string("set_fnv1a64_") + f);
  write_safetensors((d / "decoder_lm.safetensors").string(), t, legacy);
  CHECK_NOTHROW(load_tiny_lm(d.string()));
  write_safetensors((d / "decoder_lm.safetensors").string(), t, meta);
  fs::copy_file(require_data_file("ch09/tokenizer.json"), d / "tokenizer.json", fs::copy_options::overwrite_existing);
  CHECK_NOTHROW(load_tiny_lm(d.string()));
  spit(d / "kjv_valid.txt", slurp(d / "kjv_valid.txt") + "1:1 And one verse more.\n");
  CHECK_THROWS_WITH(load_tiny_lm(d.string()), doctest::Contains("kjv_valid.txt does not belong to"));
  // A folder where the held-out text should be is said as a folder, not as missing.
  fs::remove(d / "kjv_valid.txt");
  fs::create_directory(d / "kjv_valid.txt");
  CHECK_THROWS_WITH(load_tiny_lm(d.string()), doctest::Contains("kjv_valid.txt is a folder, not chapter 09's kjv_valid.txt"));
  fs::remove_all(d);
}

TEST_CASE("load_or_train: without --train it only loads; with it it trains, makes one folder and saves there") {
  const fs::path d = fresh("lot-plain");
  Calls a;
  CHECK_FALSE(run({(d / "m.safetensors").string(), false, 3, false}, a));
  CHECK(a.loaded == (d / "m.safetensors").string());
  CHECK_FALSE(a.trained);
  CHECK(a.saved.empty());

  Calls b;
  const std::string target = (d / "ch99" / "m.safetensors").string();  // ch99/ does not exist yet
  CHECK(run({target, true, 3, false}, b));
  CHECK(b.loaded.empty());
  CHECK(b.trained);
  CHECK(b.got_callback);
  CHECK(b.saved == target);
  CHECK(fs::is_regular_file(target));
  fs::remove_all(d);
}

TEST_CASE("load_or_train: a target that is not ours stops --train before any training") {
  const fs::path d = fresh("lot-refused");
  REQUIRE(::mkfifo((d / "fifo.safetensors").c_str(), 0644) == 0);
  Calls a;
  CHECK_THROWS_WITH_AS(run({(d / "fifo.safetensors").string(), true, 3, false}, a), doctest::Contains("FIFO"),
                       OutputFileError);
  CHECK_FALSE(a.trained);  // checked first: no minutes of training lost to a target that is refused anyway
  CHECK(type_of(d / "fifo.safetensors") == S_IFIFO);

  Calls b;  // two folder levels missing: only one is ever made
  CHECK_THROWS_AS(run({(d / "a" / "b" / "m.safetensors").string(), true, 3, false}, b), OutputFileError);
  CHECK_FALSE(b.trained);
  CHECK_FALSE(fs::exists(d / "a"));

  Calls c;  // an empty name (an unset variable) is an error, not "somewhere"
  CHECK_THROWS_AS(run({"", true, 3, false}, c), OutputFileError);
  CHECK_FALSE(c.trained);
  fs::remove_all(d);
}

TEST_CASE("train_recall_suite: every target is checked before the first model trains") {
  const fs::path d = fresh("lot-recall");
  const RecallSuite suite;
  // A FIFO where the last model of the suite goes: were the targets checked only on saving, every
  // model before it would be trained and written first.
  const std::string last = recall_checkpoint_name(recall_archs().back(), suite.widths.back());
  const fs::path fifo = d / last.substr(last.find('/') + 1);
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  RecallTrainConfig tc;
  tc.max_steps = tc.ssm_max_steps = 1;  // were it to train, quickly
  tc.eval_every = 1;
  tc.eval_seqs = 1;
  std::size_t trained = 0;
  CHECK_THROWS_WITH_AS(train_recall_suite(suite, tc, d.string(), [&](const RecallTrained&) { ++trained; }),
                       doctest::Contains("FIFO"), OutputFileError);
  CHECK(trained == 0);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(d)) entries += e.path() != fifo;
  CHECK(entries == 0);
  CHECK(type_of(fifo) == S_IFIFO);
  fs::remove_all(d);
}

TEST_CASE("checkpoint set: one run id across the files reads; another run's file, or none beside one, is refused") {
  const fs::path d = fresh("ckset");
  const TensorMap t = {{"w", TensorF32{{2}, {1.0f, 2.0f}}}};
  const auto put = [&](const char* name, const std::string& run) {
    Metadata m = {{"encoding", name}};
    if (!run.empty()) m[kSetRunKey] = run;
    write_safetensors((d / name).string(), t, m);
    return (d / name).string();
  };
  const std::string r1 = new_run_id(), r2 = new_run_id();
  CHECK(r1.size() == 16);
  CHECK(r1 != r2);  // a fresh id for every run
  const std::vector<std::string> files = {put("a", r1), put("b", r1), put("c", r1)};
  CHECK_NOTHROW(check_checkpoint_set(files, "Remedy."));
  put("b", r2);  // one file of another run: refused, named, with the remedy
  CHECK_THROWS_WITH_AS(check_checkpoint_set(files, "Remedy."),
                       doctest::Contains(((d / "b").string() + " does not belong with " + (d / "a").string()).c_str()),
                       SafetensorsError);
  CHECK_THROWS_WITH(check_checkpoint_set(files, "Remedy."), doctest::Contains("Remedy."));
  put("b", "");  // a file that records no run beside two that do (a run stopped between renames)
  CHECK_THROWS_WITH(check_checkpoint_set(files, ""), doctest::Contains("recorded no id"));
  put("a", "");
  put("c", "");  // none records a run: a set made before run ids, accepted
  CHECK_NOTHROW(check_checkpoint_set(files, ""));
  fs::remove_all(d);
}

TEST_CASE("require_data_set: every file from the first place holding any; a missing one is named there") {
  const KeepEnv keep("ATTN_DATA_DIR");
  const fs::path d = fresh("dataset");
  fs::create_directories(d / "ch05");
  ::setenv("ATTN_DATA_DIR", d.c_str(), 1);
  const std::vector<std::string> names = {"ch05/none.safetensors", "ch05/rope.safetensors"};
  // Nothing here: the shipped set behind it, both files from that one place.
  const std::vector<std::string> shipped = require_data_set(names);
  REQUIRE(shipped.size() == 2);
  CHECK(fs::path(shipped[0]).parent_path() == fs::path(shipped[1]).parent_path());
  CHECK(shipped[0].find(d.string()) == std::string::npos);
  // One of them here: the other is missing here, never taken from the shipped data.
  spit(d / "ch05" / "rope.safetensors", "x");
  CHECK_THROWS_WITH_AS(require_data_set(names), doctest::Contains(((d / "ch05" / "none.safetensors").string() + " is missing").c_str()),
                       DataFileError);
  fs::create_directory(d / "ch05" / "none.safetensors");
  CHECK_THROWS_WITH(require_data_set(names), doctest::Contains("none.safetensors is a folder"));
  fs::remove(d / "ch05" / "none.safetensors");
  spit(d / "ch05" / "none.safetensors", "y");
  CHECK(require_data_set(names) == std::vector<std::string>{(d / "ch05/none.safetensors").string(),
                                                            (d / "ch05/rope.safetensors").string()});
  fs::remove_all(d);
}

TEST_CASE("CheckpointSet --train: targets checked first, nothing replaced before commit, one run id in each file") {
  const KeepEnv keep("ATTN_DATA_DIR");
  const fs::path d = fresh("ckset-train");
  ::setenv("ATTN_DATA_DIR", d.c_str(), 1);
  fs::create_directories(d / "ch99");
  spit(d / "ch99" / "b.safetensors", "notes, not a checkpoint");
  const std::vector<std::string> names = {"ch99/a.safetensors", "ch99/b.safetensors"};
  CHECK_THROWS_WITH_AS(CheckpointSet(names, true), doctest::Contains("is not a checkpoint"), OutputFileError);
  CHECK(slurp(d / "ch99" / "b.safetensors") == "notes, not a checkpoint");
  fs::remove(d / "ch99" / "b.safetensors");
  ParamRegistry reg;
  float w[2] = {1.0f, 2.0f}, g[2] = {0.0f, 0.0f};
  reg.add_raw("w", {2}, {2}, w, g);
  {
    CheckpointSet set(names, true);
    set.save(set.path(names[0]), reg, {{"k", "v"}});
    CHECK_FALSE(fs::exists(d / "ch99" / "a.safetensors"));  // staged, not in place
    CHECK_THROWS_AS(set.commit(), OutputFileError);       // one of the two: nothing is written
    CHECK_FALSE(fs::exists(d / "ch99" / "a.safetensors"));
  }  // never committed: its temporary is gone too
  for (const auto& e : fs::directory_iterator(d / "ch99")) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  CheckpointSet set(names, true);
  for (const std::string& n : names) set.save(set.path(n), reg, {});
  set.commit();
  CHECK_NOTHROW(CheckpointSet(names, false));  // reads back as one set
  Metadata meta;
  (void)read_safetensors((d / "ch99" / "b.safetensors").string(), &meta);
  CHECK(meta.at(kSetRunKey) == set.run());
  fs::remove_all(d);
}

// The offline head view page (see attn/present/html_view.hpp).
#include "attn/present/html_view.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/data/output_file.hpp"

namespace attn {

namespace {

// Text for an HTML element body.
std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

Labels or_indices(const Labels& labels, std::size_t n) {
  if (labels.size() == n) return labels;
  Labels out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// The page's script: draws the selected (set, layer, head) and keeps the hash in step.
constexpr const char* kScript = R"JS(
(function () {
  var data = JSON.parse(document.getElementById('attn-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var selSet = document.getElementById('sel-set'), selLayer = document.getElementById('sel-layer'),
      selHead = document.getElementById('sel-head');
  var state = {set: 0, layer: 0, head: 0};
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function options(sel, n, label) {
    sel.innerHTML = '';
    for (var i = 0; i < n; ++i) {
      var o = document.createElement('option');
      o.value = i; o.textContent = label(i); sel.appendChild(o);
    }
  }
  function readHash() {
    var h = window.location.hash.replace(/^#/, '').split('&');
    for (var i = 0; i < h.length; ++i) {
      var kv = h[i].split('=');
      if (kv.length === 2 && kv[0] in state && /^[0-9]+$/.test(kv[1])) state[kv[0]] = parseInt(kv[1], 10);
    }
  }
  function clamp() {
    state.set = Math.min(state.set, data.sets.length - 1);
    var s = data.sets[state.set];
    state.layer = Math.min(state.layer, s.weights.length - 1);
    state.head = Math.min(state.head, s.weights[state.layer].length - 1);
  }
  // Opacity of a cell: weights as they are; anything else scaled to the matrix's min..max.
  function scaler(m) {
    var lo = Infinity, hi = -Infinity;
    m.forEach(function (r) { r.forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
    if (lo >= 0 && hi <= 1) return function (v) { return v === null ? 0 : v; };
    return function (v) { return v === null || hi === lo ? 0 : (v - lo) / (hi - lo); };
  }
  function draw() {
    clamp();
    var s = data.sets[state.set];
    selSet.value = state.set;
    options(selLayer, s.weights.length, function (i) { return 'layer ' + i; });
    options(selHead, s.weights[state.layer].length, function (i) { return 'head ' + i; });
    selLayer.value = state.layer; selHead.value = state.head;
    var m = s.weights[state.layer][state.head], f = scaler(m);
    var q = s.query_tokens, k = s.key_tokens, rowH = 18, width = 420;
    var svg = document.getElementById('head-view');
    svg.innerHTML = '';
    var n = Math.max(q.length, k.length);
    svg.setAttribute('height', n * rowH + 30);
    svg.setAttribute('width', width);
    var sum = 0;
    for (var i = 0; i < q.length; ++i)
      for (var j = 0; j < k.length; ++j) {
        var w = f(m[i][j]);
        sum += w;
        if (w < 0.005) continue;
        svg.appendChild(el('line', {'class': 'edge', x1: 130, y1: 20 + i * rowH, x2: width - 130,
                                    y2: 20 + j * rowH, 'stroke-opacity': w.toFixed(4),
                                    'data-q': i, 'data-k': j, 'data-w': w.toFixed(4)}));
      }
    for (var i = 0; i < q.length; ++i)
      svg.appendChild(el('text', {'class': 'tok-q', x: 124, y: 24 + i * rowH, 'text-anchor': 'end'}, q[i]));
    for (var j = 0; j < k.length; ++j)
      svg.appendChild(el('text', {'class': 'tok-k', x: width - 124, y: 24 + j * rowH}, k[j]));
    // the same matrix as a grid
    var grid = document.getElementById('grid'), c = 12;
    grid.innerHTML = '';
    grid.setAttribute('width', 90 + k.length * c);
    grid.setAttribute('height', 60 + q.length * c);
    for (var j = 0; j < k.length; ++j)
      grid.appendChild(el('text', {x: 94 + j * c, y: 54, transform: 'rotate(-60 ' + (94 + j * c) + ' 54)',
                                   'class': 'grid-label'}, k[j]));
    for (var i = 0; i < q.length; ++i) {
      grid.appendChild(el('text', {x: 86, y: 70 + i * c, 'text-anchor': 'end', 'class': 'grid-label'}, q[i]));
      for (var j = 0; j < k.length; ++j)
        grid.appendChild(el('rect', {x: 90 + j * c, y: 60 + i * c, width: c - 1, height: c - 1,
                                     'fill-opacity': f(m[i][j]).toFixed(4), 'class': 'cell'}));
    }
    document.getElementById('caption').textContent = s.name + ' · layer ' + state.layer + ' · head ' +
        state.head + ' · ' + q.length + ' queries × ' + k.length + ' keys';
    var st = document.getElementById('state');
    st.setAttribute('data-set', state.set); st.setAttribute('data-layer', state.layer);
    st.setAttribute('data-head', state.head); st.setAttribute('data-sum', sum.toFixed(4));
    var hash = '#set=' + state.set + '&layer=' + state.layer + '&head=' + state.head;
    if (window.location.hash !== hash) history.replaceState(null, '', hash);
  }
  options(selSet, data.sets.length, function (i) { return data.sets[i].name; });
  selSet.onchange = function () { state.set = +selSet.value; state.layer = 0; state.head = 0; draw(); };
  selLayer.onchange = function () { state.layer = +selLayer.value; draw(); };
  selHead.onchange = function () { state.head = +selHead.value; draw(); };
  window.addEventListener('hashchange', function () { readHash(); draw(); });
  readHash();
  draw();
})();
)JS";

constexpr const char* kStyle = R"CSS(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
select { margin-right: 1em; }
.edge { stroke: #1f6fd1; stroke-width: 2; }
.tok-q, .tok-k { font-size: 13px; font-family: monospace; }
.cell { fill: #1f6fd1; }
.grid-label { font-size: 10px; font-family: monospace; }
#caption { margin: 0.6em 0; color: #555; }
)CSS";

}  // namespace

std::string head_view_html(const std::string& title, const std::vector<AttentionSet>& sets) {
  nlohmann::json j;
  j["sets"] = nlohmann::json::array();
  for (const AttentionSet& s : sets) {
    if (s.layers.empty()) continue;
    const std::size_t tq = s.layers[0].shape(1), tk = s.layers[0].shape(2);
    nlohmann::json js;
    js["name"] = s.name;
    js["query_tokens"] = or_indices(s.query_tokens, tq);
    js["key_tokens"] = or_indices(s.key_tokens, tk);
    if (!s.query_tokens.empty() && s.query_tokens.size() != tq)
      throw ShapeError(fmt::format("head_view_html: set '{}' has {} query tokens for {} rows", s.name, s.query_tokens.size(), tq));
    if (!s.key_tokens.empty() && s.key_tokens.size() != tk)
      throw ShapeError(fmt::format("head_view_html: set '{}' has {} key tokens for {} columns", s.name, s.key_tokens.size(), tk));
    nlohmann::json layers = nlohmann::json::array();
    for (const Tensor3& l : s.layers) {
      expect_shape("head_view_html", "layer", shape_of(l), {0, tq, tk});
      nlohmann::json heads = nlohmann::json::array();
      for (std::size_t h = 0; h < l.shape(0); ++h) {
        nlohmann::json rows = nlohmann::json::array();
        for (std::size_t i = 0; i < tq; ++i) {
          nlohmann::json row = nlohmann::json::array();
          for (std::size_t k = 0; k < tk; ++k) {
            const double v = l(h, i, k);
            if (std::isfinite(v)) row.push_back(std::round(v * 1e4) / 1e4);  // 4 decimals keep pages small
            else row.push_back(nullptr);
          }
          rows.push_back(row);
        }
        heads.push_back(rows);
      }
      layers.push_back(heads);
    }
    js["weights"] = layers;
    j["sets"].push_back(js);
  }
  if (j["sets"].empty()) throw std::invalid_argument("head_view_html: nothing to draw (no attention set has a layer)");
  std::string payload = j.dump();
  for (std::size_t p = payload.find("</"); p != std::string::npos; p = payload.find("</", p + 2))
    payload.replace(p, 2, "<\\/");  // a token "</script>" must not end the data block
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape_html(title) + "</title>\n";
  page += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  page += "<h2>" + escape_html(title) + "</h2>\n";
  page += "<div><label>attention <select id=\"sel-set\"></select></label>"
          "<label>layer <select id=\"sel-layer\"></select></label>"
          "<label>head <select id=\"sel-head\"></select></label></div>\n";
  page += "<div id=\"caption\"></div>\n<div id=\"state\"></div>\n";
  page += "<svg id=\"head-view\" xmlns=\"http://www.w3.org/2000/svg\"></svg>\n";
  page += "<div><svg id=\"grid\" xmlns=\"http://www.w3.org/2000/svg\"></svg></div>\n";
  page += "<p style=\"color:#777\">Left: queries (in chapters 01&ndash;02: the output words), right: keys (there: "
          "the source words); line opacity = attention weight. An RNN model has one layer and one head; chapters "
          "03&ndash;04 introduce queries, keys and heads. Open on one head with #set=S&amp;layer=L&amp;head=H.</p>\n";
  page += "<script id=\"attn-data\" type=\"application/json\">" + payload + "</script>\n";
  page += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return page;
}

void write_head_view_html(const std::string& path, const std::string& title, const std::vector<AttentionSet>& sets) {
  const std::string page = head_view_html(title, sets);
  try {
    write_file_atomically(path, page);  // never over a device, FIFO or folder
  } catch (const OutputFileError& e) {
    throw std::runtime_error("cannot write the HTML page: " + std::string(e.what()));
  }
}

}  // namespace attn

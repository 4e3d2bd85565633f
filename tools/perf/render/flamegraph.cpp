// SPDX-License-Identifier: GPL-2.0
#include "pbid/render/flamegraph.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <utility>

namespace pbid::render {

namespace {

// The geometry, in pixels. The script reads the same numbers from the document (data-xpad,
// data-char-width on the <svg>), so the two never disagree.
constexpr double kXPad = 10;
constexpr double kFrameHeight = 16;
constexpr double kTopPad = 80;     // title, subtitle, legend and controls
constexpr double kBottomPad = 30;  // the status line
constexpr double kFontSize = 12;
constexpr double kCharWidth = kFontSize * 0.59;  // Verdana's average advance at that size
// A frame narrower than this is not drawn, nor anything above it: it could not be seen or
// clicked, and a profile with many tiny frames would make a document too large to open.
constexpr double kMinWidth = 0.1;
constexpr const char* kHighlightFill = "rgb(230,0,230)";

struct Node {
  std::string name;
  FrameKind kind = FrameKind::kUser;
  uint64_t weight = 0;
  // Keyed by name first so that children are drawn in name order, as flamegraph.pl does;
  // the same name in two kinds stays two frames.
  std::map<std::pair<std::string, FrameKind>, Node> children;
};

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string Px(double v) {
  return Format("%.3f", v);
}

std::string Thousands(uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

// The length of the UTF-8 sequence starting at s[i], or 0 when it is not a valid one.
size_t Utf8Length(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n;
  if (c < 0x80) {
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
  } else {
    return 0;
  }
  if (i + n > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  // Overlong forms, surrogates and values past U+10FFFF are not characters XML accepts.
  if ((c == 0xE0 && byte(i + 1) < 0xA0) || (c == 0xED && byte(i + 1) >= 0xA0) ||
      (c == 0xF0 && byte(i + 1) < 0x90) || (c == 0xF4 && byte(i + 1) >= 0x90)) {
    return 0;
  }
  return n;
}

// The name split into characters, with what XML cannot carry (control characters, bytes that
// are not UTF-8: symbol names come from arbitrary files) replaced by U+FFFD, so that the
// document always parses.
std::vector<std::string> Characters(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8Length(s, i);
    if (n == 0 || (c < 0x20 && c != '\t')) {
      out.emplace_back("\xEF\xBF\xBD");
      i += n == 0 ? 1 : n;
      continue;
    }
    out.emplace_back(s, i, n);
    i += n;
  }
  return out;
}

// Text and attribute values alike: C++ names carry < > & and quotes.
std::string Escape(const std::string& s) {
  std::string out;
  for (const std::string& ch : Characters(s)) {
    if (ch == "&") {
      out += "&amp;";
    } else if (ch == "<") {
      out += "&lt;";
    } else if (ch == ">") {
      out += "&gt;";
    } else if (ch == "\"") {
      out += "&quot;";
    } else if (ch == "'") {
      out += "&apos;";
    } else if (ch == "\t") {
      out += "&#9;";
    } else {
      out += ch;
    }
  }
  return out;
}

// The label that fits a frame width wide: the whole name, or its start and "..", or nothing
// when not even three characters fit. The script does the same after a zoom.
std::string FitLabel(const std::string& name, double width) {
  const auto fit = static_cast<size_t>((width - 6) / kCharWidth);
  if (width < 6 || fit < 3) {
    return std::string();
  }
  std::vector<std::string> chars = Characters(name);
  if (chars.size() <= fit) {
    return name;
  }
  std::string out;
  for (size_t i = 0; i + 2 < fit; ++i) {
    out += chars[i];
  }
  return out + "..";
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Each kind has its own palette, and the name picks a colour in it: the same function has the
// same colour in every graph, and neighbours still differ.
std::string Fill(FrameKind kind, const std::string& name) {
  const uint64_t h = Fnv1a(name);
  const auto v1 = static_cast<int>(h & 0xFF);
  const auto v2 = static_cast<int>((h >> 8) & 0xFF);
  const auto v3 = static_cast<int>((h >> 16) & 0xFF);
  int r, g, b;
  switch (kind) {
    case FrameKind::kKernel:  // blue to aqua
      r = 40 + v1 * 60 / 255;
      g = 150 + v2 * 70 / 255;
      b = 200 + v3 * 55 / 255;
      break;
    case FrameKind::kUnsymbolized:  // greys
      r = g = b = 150 + v1 * 50 / 255;
      break;
    case FrameKind::kNoBuildId:  // olive to yellow-green
      r = 150 + v1 * 50 / 255;
      g = 180 + v2 * 50 / 255;
      b = 40 + v3 * 50 / 255;
      break;
    case FrameKind::kUser:
    default:  // red to orange, flamegraph.pl's "hot" short of the yellows of no-build-id
      r = 205 + v1 * 50 / 255;
      g = v2 * 170 / 255;
      b = v3 * 55 / 255;
      break;
  }
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(b) + ")";
}

constexpr const char* kStyle = R"(
text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }
#title { font-size: 17px; text-anchor: middle; }
#subtitle { fill: rgb(96,96,96); text-anchor: middle; }
.control { cursor: pointer; }
.control:hover { fill: rgb(0,0,200); }
#search { text-anchor: end; }
#matched { text-anchor: end; }
#reset-zoom.inactive { display: none; }
g.f { cursor: pointer; }
g.f text { pointer-events: none; }
g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
g.f.hidden { display: none; }
)";

// The interaction, written for this document: frames are a flat list of <g class="f"> whose
// data-parent names the parent frame, and data-x / data-w hold the unzoomed geometry.
constexpr const char* kScript = R"(
(function () {
  var svg = document.documentElement;
  var xpad = parseFloat(svg.getAttribute('data-xpad'));
  var charWidth = parseFloat(svg.getAttribute('data-char-width'));
  var total = parseFloat(svg.getAttribute('data-total'));
  var highlight = svg.getAttribute('data-highlight-fill');
  var unit = svg.getAttribute('data-unit');
  var fullWidth = parseFloat(svg.getAttribute('width')) - 2 * xpad;
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var byId = {};
  frames.forEach(function (g) { byId[g.id] = g; });
  var details = document.getElementById('details');
  var matched = document.getElementById('matched');
  var resetZoom = document.getElementById('reset-zoom');
  var currentSearch = '';

  function parentOf(g) {
    var p = g.getAttribute('data-parent');
    return p ? byId[p] : null;
  }
  function isAncestor(a, g) {
    for (var p = parentOf(g); p; p = parentOf(p)) {
      if (p === a) return true;
    }
    return false;
  }
  function label(name, width) {
    var fit = Math.floor((width - 6) / charWidth);
    if (width < 6 || fit < 3) return '';
    var chars = Array.from(name);
    if (chars.length <= fit) return name;
    return chars.slice(0, fit - 2).join('') + '..';
  }
  function place(g, x, w) {
    var rect = g.querySelector('rect');
    var text = g.querySelector('text');
    rect.setAttribute('x', x.toFixed(3));
    rect.setAttribute('width', w.toFixed(3));
    text.setAttribute('x', (x + 3).toFixed(3));
    text.textContent = label(g.getAttribute('data-name'), w);
  }
  function describe(g) {
    var w = parseFloat(g.getAttribute('data-weight'));
    return g.getAttribute('data-name') + ' (' + g.getAttribute('data-kind') + ', ' +
        w.toLocaleString('en-US') + ' ' + unit + ', ' + (100 * w / total).toFixed(2) + '%)';
  }

  function zoom(target) {
    var tx = parseFloat(target.getAttribute('data-x'));
    var tw = parseFloat(target.getAttribute('data-w'));
    var scale = fullWidth / tw;
    frames.forEach(function (g) {
      var x = parseFloat(g.getAttribute('data-x'));
      var w = parseFloat(g.getAttribute('data-w'));
      if (g === target || isAncestor(target, g)) {
        g.classList.remove('hidden');
        place(g, xpad + (x - tx) * scale, w * scale);
      } else if (isAncestor(g, target)) {
        g.classList.remove('hidden');
        place(g, xpad, fullWidth);
      } else {
        g.classList.add('hidden');
      }
    });
    resetZoom.classList.remove('inactive');
  }
  function unzoom() {
    frames.forEach(function (g) {
      g.classList.remove('hidden');
      place(g, parseFloat(g.getAttribute('data-x')), parseFloat(g.getAttribute('data-w')));
    });
    resetZoom.classList.add('inactive');
  }

  function clearSearch() {
    frames.forEach(function (g) {
      var rect = g.querySelector('rect');
      if (rect.hasAttribute('data-fill')) {
        rect.setAttribute('fill', rect.getAttribute('data-fill'));
        rect.removeAttribute('data-fill');
      }
    });
    matched.textContent = ' ';
    currentSearch = '';
  }
  function search(term) {
    clearSearch();
    if (!term) return;
    var re;
    try {
      re = new RegExp(term);
    } catch (e) {
      details.textContent = 'Bad regular expression: ' + term;
      return;
    }
    var hits = [];
    frames.forEach(function (g) {
      if (g.getAttribute('data-kind') === 'root') return;
      if (!re.test(g.getAttribute('data-name'))) return;
      var rect = g.querySelector('rect');
      rect.setAttribute('data-fill', rect.getAttribute('fill'));
      rect.setAttribute('fill', highlight);
      hits.push(g);
    });
    // A match inside another match is already counted in it.
    var weight = 0;
    hits.forEach(function (g) {
      for (var p = parentOf(g); p; p = parentOf(p)) {
        if (hits.indexOf(p) >= 0) return;
      }
      weight += parseFloat(g.getAttribute('data-weight'));
    });
    currentSearch = term;
    matched.textContent = 'Matched: ' + (100 * weight / total).toFixed(2) + '%';
  }
  function askSearch() {
    var term = window.prompt('Search for (regular expression), empty to clear:', currentSearch);
    if (term === null) return;
    search(term);
  }

  frames.forEach(function (g) {
    g.addEventListener('click', function (e) { zoom(g); e.stopPropagation(); });
    g.addEventListener('mouseover', function () { details.textContent = describe(g); });
    g.addEventListener('mouseout', function () { details.textContent = ' '; });
  });
  resetZoom.addEventListener('click', unzoom);
  document.getElementById('search').addEventListener('click', askSearch);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey && (e.key === 'f' || e.key === 'F')) || e.key === 'F3') {
      e.preventDefault();
      askSearch();
    }
  });
})();
)";

void SvgHeader(std::string& out, double width, double height, const FlameGraphOptions& options,
               uint64_t total) {
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + Px(width) +
         "\" height=\"" + Px(height) + "\" viewBox=\"0 0 " + Px(width) + " " + Px(height) +
         "\" data-xpad=\"" + Px(kXPad) + "\" data-char-width=\"" + Format("%.4f", kCharWidth) +
         "\" data-total=\"" + std::to_string(total) + "\" data-unit=\"" + Escape(options.unit) +
         "\" data-highlight-fill=\"" + kHighlightFill + "\">\n";
  out += "<style type=\"text/css\"><![CDATA[" + std::string(kStyle) + "]]></style>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + Px(width) + "\" height=\"" + Px(height) +
         "\" fill=\"rgb(248,248,248)\"/>\n";
  out += "<text id=\"title\" x=\"" + Px(width / 2) + "\" y=\"24\">" + Escape(options.title) +
         "</text>\n";
  if (!options.subtitle.empty()) {
    out += "<text id=\"subtitle\" x=\"" + Px(width / 2) + "\" y=\"42\">" +
           Escape(options.subtitle) + "</text>\n";
  }
}

void Legend(std::string& out) {
  static const std::pair<FrameKind, const char*> kEntries[] = {
      {FrameKind::kUser, "user"},
      {FrameKind::kKernel, "kernel"},
      {FrameKind::kUnsymbolized, "unsymbolized"},
      {FrameKind::kNoBuildId, "no build ID"},
  };
  out += "<g id=\"legend\">\n";
  double x = kXPad;
  for (const auto& [kind, label] : kEntries) {
    // A fixed name per kind: the swatch shows the palette, not one function's colour.
    out += "<rect class=\"legend-swatch\" data-kind=\"" + std::string(FrameKindName(kind)) +
           "\" x=\"" + Px(x) + "\" y=\"52\" width=\"12\" height=\"12\" fill=\"" +
           Fill(kind, FrameKindName(kind)) + "\"/>";
    out += "<text x=\"" + Px(x + 16) + "\" y=\"62\">" + label + "</text>\n";
    x += 16 + kCharWidth * static_cast<double>(std::string(label).size()) + 20;
  }
  out += "</g>\n";
}

struct Layout {
  double width = 0;
  double height = 0;
  uint64_t total = 0;
  const FlameGraphOptions* options = nullptr;
  int next_id = 0;
  std::string frames;
};

int MaxDepth(const Node& node, double scale, int depth) {
  int max = depth;
  for (const auto& [key, child] : node.children) {
    if (static_cast<double>(child.weight) * scale >= kMinWidth) {
      max = std::max(max, MaxDepth(child, scale, depth + 1));
    }
  }
  return max;
}

void DrawFrame(Layout& layout, const Node& node, const std::string& kind, double x, double w,
               int depth, const std::string& parent_id) {
  const std::string id = "f" + std::to_string(layout.next_id++);
  const double y = layout.height - kBottomPad - (depth + 1) * kFrameHeight;
  const double percent =
      100.0 * static_cast<double>(node.weight) / static_cast<double>(layout.total);
  const std::string name = Escape(node.name);
  std::string& out = layout.frames;
  out += "<g class=\"f\" id=\"" + id + "\"";
  if (!parent_id.empty()) {
    out += " data-parent=\"" + parent_id + "\"";
  }
  out += " data-name=\"" + name + "\" data-kind=\"" + kind + "\" data-weight=\"" +
         std::to_string(node.weight) + "\" data-depth=\"" + std::to_string(depth) + "\" data-x=\"" +
         Px(x) + "\" data-w=\"" + Px(w) + "\">";
  out += "<title>" + name + " (" + kind + ", " + Thousands(node.weight) + " " +
         Escape(layout.options->unit) + ", " + Format("%.2f", percent) + "%)</title>";
  out += "<rect x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" width=\"" + Px(w) + "\" height=\"" +
         Px(kFrameHeight - 1) + "\" rx=\"2\" ry=\"2\" fill=\"" +
         (kind == "root" ? std::string("rgb(200,200,200)") : Fill(node.kind, node.name)) + "\"/>";
  out += "<text x=\"" + Px(x + 3) + "\" y=\"" + Px(y + kFrameHeight - 4.5) + "\">" +
         Escape(FitLabel(node.name, w)) + "</text>";
  out += "</g>\n";

  const double scale = w / static_cast<double>(node.weight);
  double child_x = x;
  for (const auto& [key, child] : node.children) {
    const double child_w = static_cast<double>(child.weight) * scale;
    if (child_w >= kMinWidth) {
      DrawFrame(layout, child, FrameKindName(child.kind), child_x, child_w, depth + 1, id);
    }
    child_x += child_w;
  }
}

}  // namespace

std::string FlameGraphSvg(const std::vector<FlameStack>& stacks, const FlameGraphOptions& options) {
  Node root;
  root.name = "all";
  for (const FlameStack& stack : stacks) {
    if (stack.weight == 0) {
      continue;
    }
    root.weight += stack.weight;
    Node* node = &root;
    for (const FlameFrame& frame : stack.frames) {
      Node& child = node->children[{frame.name, frame.kind}];
      child.name = frame.name;
      child.kind = frame.kind;
      child.weight += stack.weight;
      node = &child;
    }
  }

  // Too narrow a document has no room for the controls; the option is a request, not a
  // promise to draw nothing.
  const double width = std::max(options.width, 200);
  std::string out;
  if (root.weight == 0) {
    const double height = kTopPad + 60;
    SvgHeader(out, width, height, options, 0);
    out += "<text id=\"no-samples\" x=\"" + Px(width / 2) + "\" y=\"" + Px(kTopPad + 20) +
           "\" style=\"text-anchor: middle\">no samples</text>\n";
    out += "</svg>\n";
    return out;
  }

  const double plot_width = width - 2 * kXPad;
  const int max_depth = MaxDepth(root, plot_width / static_cast<double>(root.weight), 0);
  Layout layout;
  layout.width = width;
  layout.height = kTopPad + (max_depth + 1) * kFrameHeight + kBottomPad;
  layout.total = root.weight;
  layout.options = &options;
  DrawFrame(layout, root, "root", kXPad, plot_width, 0, std::string());

  SvgHeader(out, width, layout.height, options, root.weight);
  Legend(out);
  out += "<text id=\"reset-zoom\" class=\"control inactive\" x=\"" + Px(kXPad) +
         "\" y=\"24\">Reset Zoom</text>\n";
  out += "<text id=\"search\" class=\"control\" x=\"" + Px(width - kXPad) +
         "\" y=\"24\">Search</text>\n";
  out += "<text id=\"details\" x=\"" + Px(kXPad) + "\" y=\"" + Px(layout.height - 10) +
         "\"> </text>\n";
  out += "<text id=\"matched\" x=\"" + Px(width - kXPad) + "\" y=\"" + Px(layout.height - 10) +
         "\"> </text>\n";
  out += "<g id=\"frames\">\n" + layout.frames + "</g>\n";
  out += "<script type=\"text/ecmascript\"><![CDATA[" + std::string(kScript) + "]]></script>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace pbid::render

#include "page.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace embed::pages {
namespace {

// The decoded code point of a well-formed UTF-8 sequence at text[at] and its length, or length 0 when the
// bytes there are not one (a stray continuation byte, a truncated, overlong or surrogate sequence, past U+10FFFF).
struct Decoded {
    char32_t code = 0;
    std::size_t length = 0;
};

Decoded decode_utf8(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) return {lead, 1};
    std::size_t length = 0;
    char32_t code = 0;
    char32_t smallest = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2, code = lead & 0x1Fu, smallest = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3, code = lead & 0x0Fu, smallest = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4, code = lead & 0x07u, smallest = 0x10000;
    } else {
        return {};
    }
    if (at + length > text.size()) return {};
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return {};
        code = (code << 6) | (byte(at + i) & 0x3Fu);
    }
    if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {};
    return {code, length};
}

std::string hex_byte(unsigned value) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "%02X", value);
    return buffer;
}

// The visible stand-in for a control character: C0 and DEL as their Unicode
// control pictures (U+2400 + c, U+2421), C1 as "<U+0085>"; empty for any other code point.
std::string visible_control(char32_t code) {
    const auto utf8_of_2400_block = [](char32_t picture) {
        // U+2400..U+2421 are three-byte sequences E2 90 80..E2 90 A1.
        return std::string{static_cast<char>(0xE2), static_cast<char>(0x90), static_cast<char>(0x80 + (picture - 0x2400))};
    };
    if (code < 0x20) return utf8_of_2400_block(0x2400 + code);
    if (code == 0x7F) return utf8_of_2400_block(0x2421);
    if (code >= 0x80 && code <= 0x9F) return "<U+00" + hex_byte(static_cast<unsigned>(code)) + ">";
    return {};
}

// Shared by both escapers: markup characters become references, control characters and bad bytes
// their visible form, passed through mark (which wraps it in a span for text, leaves it for attributes).
template <class Mark>
std::string escape(std::string_view text, bool quotes, Mark mark) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const Decoded decoded = decode_utf8(text, at);
        if (decoded.length == 0) {
            out += mark("\\x" + hex_byte(static_cast<unsigned char>(text[at])), true);
            ++at;
            continue;
        }
        const std::string shown = visible_control(decoded.code);
        if (!shown.empty()) {
            out += mark(shown, false);
        } else if (decoded.code == '&') {
            out += "&amp;";
        } else if (decoded.code == '<') {
            out += "&lt;";
        } else if (decoded.code == '>') {
            out += "&gt;";
        } else if (quotes && decoded.code == '"') {
            out += "&quot;";
        } else if (quotes && decoded.code == '\'') {
            out += "&#39;";
        } else {
            out.append(text.substr(at, decoded.length));
        }
        at += decoded.length;
    }
    return out;
}

std::string escaped_markup(const std::string& shown) {
    std::string out;
    for (const char c : shown) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

// The page's whole style: readable on a phone and a wide screen without
// sideways scrolling; a wide table scrolls inside its own box. Long texts
// wrap anywhere, but a number, an id or a heading never breaks inside itself
// ("2783" is not "278" above "3"): its table scrolls instead.
constexpr const char* STYLE = R"(
body { font-family: system-ui, sans-serif; line-height: 1.45; margin: 0; color: #1d2125; background: #fff; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5rem 0; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 1px solid #c9ced4; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.number, th { white-space: nowrap; overflow-wrap: normal; }
th { background: #eef1f4; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #dfe4ea; }
th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer; color: inherit; }
th[aria-sort="ascending"] button::after { content: " \25B2"; }
th[aria-sort="descending"] button::after { content: " \25BC"; }
.ctl { color: #a0155c; background: #fbe9f1; border-radius: 2px; }
code, .numbers td:last-child { font-family: ui-monospace, monospace; }
figure { margin: 1rem 0; }
figure svg { max-width: 100%; height: auto; display: block; }
)";

// Sorts a table by the clicked column (a click anywhere in its header; the
// header's button, whose click reaches the header too, takes the keyboard):
// ascending first, then reversed on each click; numbers by value with NaN
// last either way, text by Unicode code point (not UTF-16 units); ties keep
// the rows' original order. aria-sort tells the state.
constexpr const char* SCRIPT = R"(
"use strict";
(function () {
  function codePoints(text) { return Array.from(text, function (c) { return c.codePointAt(0); }); }
  function compareText(a, b) {
    var x = codePoints(a), y = codePoints(b);
    for (var i = 0; i < x.length && i < y.length; i++) {
      if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    }
    return x.length - y.length;
  }
  function compareNumbers(a, b, sign) {
    var aNaN = isNaN(a), bNaN = isNaN(b);
    if (aNaN || bNaN) return aNaN === bNaN ? 0 : (aNaN ? 1 : -1);
    return a < b ? -sign : (a > b ? sign : 0);
  }
  function sortRows(table, column, kind, sign) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r, s) {
      var a = r.cells[column], b = s.cells[column];
      var order = kind === "number"
        ? compareNumbers(Number(a.getAttribute("data-value")), Number(b.getAttribute("data-value")), sign)
        : sign * compareText(a.textContent, b.textContent);
      return order !== 0 ? order : Number(r.getAttribute("data-order")) - Number(s.getAttribute("data-order"));
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (head, column) {
      head.addEventListener("click", function () {
        var next = head.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        Array.prototype.forEach.call(heads, function (other) { other.setAttribute("aria-sort", "none"); });
        head.setAttribute("aria-sort", next);
        sortRows(table, column, head.getAttribute("data-kind"), next === "ascending" ? 1 : -1);
      });
    });
  });
})();
)";

}  // namespace

std::string escape_text(std::string_view text) {
    return escape(text, false, [](const std::string& shown, bool) {
        return "<span class=\"ctl\">" + escaped_markup(shown) + "</span>";
    });
}

std::string escape_attribute(std::string_view text) {
    return escape(text, true, [](const std::string& shown, bool) { return escaped_markup(shown); });
}

std::string shown_number(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+inf" : "-inf";
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
}

std::string full_number(double value) {
    if (!std::isfinite(value)) return shown_number(value);
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

Cell number_cell(double value) { return {shown_number(value), value}; }

std::string sort_key(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

Page::Page(std::string title) : title_(std::move(title)) {
    body_ += "<h1>" + escape_text(title_) + "</h1>\n";
}

void Page::heading(std::string_view text) { body_ += "<h2>" + escape_text(text) + "</h2>\n"; }

void Page::paragraph(std::string_view text) { body_ += "<p>" + escape_text(text) + "</p>\n"; }

void Page::numbers(std::string_view id, const Numbers& numbers) {
    body_ += "<div class=\"scroll\"><table class=\"numbers\" id=\"" + escape_attribute(id) + "\">\n<tbody>\n";
    for (const Number& number : numbers) {
        const std::string title = number.full.empty() ? "" : " title=\"" + escape_attribute(number.full) + "\"";
        body_ += "<tr><th scope=\"row\">" + escape_text(number.name) + "</th><td" + title + ">" +
                 escape_text(number.value) + "</td></tr>\n";
    }
    body_ += "</tbody>\n</table></div>\n";
}

namespace {

// Whether the table shows column c: a text column whose every cell is empty says nothing and is left out.
bool column_shown(const SortableTable& table, std::size_t c) {
    if (table.columns[c].kind == SortableTable::Kind::number || table.rows.empty()) return true;
    for (const auto& row : table.rows) {
        if (!row[c].text.empty()) return true;
    }
    return false;
}

std::string number_td(const Cell& cell) {
    const std::string full = full_number(cell.number);
    const std::string title = full == cell.text ? "" : " title=\"" + escape_attribute(full) + "\"";
    return "<td class=\"number\" data-value=\"" + sort_key(cell.number) + "\"" + title + ">" + escape_text(cell.text) +
           "</td>";
}

}  // namespace

void Page::table(const SortableTable& table) {
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        if (table.rows[r].size() != table.columns.size()) {
            throw std::invalid_argument("table " + table.id + ": row " + std::to_string(r) + " has " +
                                        std::to_string(table.rows[r].size()) + " cells, the columns are " +
                                        std::to_string(table.columns.size()));
        }
    }
    std::vector<std::size_t> shown;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        if (column_shown(table, c)) shown.push_back(c);
    }
    std::string html = "<div class=\"scroll\"><table class=\"sortable\" id=\"" + escape_attribute(table.id) + "\">\n";
    html += "<caption>" + escape_text(table.caption) + "</caption>\n<thead><tr>";
    for (const std::size_t c : shown) {
        const bool number = table.columns[c].kind == SortableTable::Kind::number;
        html += "<th scope=\"col\" aria-sort=\"none\" data-kind=\"" + std::string(number ? "number" : "text") +
                "\"><button type=\"button\">" + escape_text(table.columns[c].heading) + "</button></th>";
    }
    html += "</tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const auto& row = table.rows[r];
        html += "<tr data-order=\"" + std::to_string(r) + "\">";
        for (const std::size_t c : shown) {
            html += table.columns[c].kind == SortableTable::Kind::number ? number_td(row[c])
                                                                          : "<td>" + escape_text(row[c].text) + "</td>";
        }
        html += "</tr>\n";
    }
    body_ += html + "</tbody>\n</table></div>\n";
    has_table_ = true;
}

void Page::figure(std::string_view svg, std::string_view caption) {
    if (svg.rfind("<?xml", 0) == 0) {
        const std::size_t end = svg.find("?>");
        svg.remove_prefix(end == std::string_view::npos ? svg.size() : end + 2);
    }
    while (!svg.empty() && (svg.front() == '\n' || svg.front() == '\r')) svg.remove_prefix(1);
    body_ += "<figure>\n";
    body_.append(svg);
    body_ += "<figcaption>" + escape_text(caption) + "</figcaption>\n</figure>\n";
}

std::string Page::str() const {
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        // Everything is inline: nothing may be fetched, so a stray reference fails closed.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
        escape_text(title_) + "</title>\n<style>" + STYLE + "</style>\n</head>\n<body>\n<main>\n" + body_ + "</main>\n";
    if (has_table_) html += std::string("<script>") + SCRIPT + "</script>\n";
    return html + "</body>\n</html>\n";
}

SortableTable ranked_table(std::string id, std::string caption, std::string score_heading,
                           std::span<const RankedId> ranked, std::span<const std::string> names) {
    using Kind = SortableTable::Kind;
    SortableTable table{std::move(id), std::move(caption),
                        {{"rank", Kind::number}, {"id", Kind::number}, {"text", Kind::text},
                         {std::move(score_heading), Kind::number}},
                        {}};
    for (std::size_t i = 0; i < ranked.size(); ++i) {
        const RankedId& entry = ranked[i];
        const bool named = entry.id >= 0 && static_cast<std::size_t>(entry.id) < names.size();
        table.rows.push_back(std::vector<Cell>{
            {std::to_string(i + 1), static_cast<double>(i + 1)},
            {std::to_string(entry.id), static_cast<double>(entry.id)},
            {named ? names[static_cast<std::size_t>(entry.id)] : std::string(), 0.0},
            number_cell(entry.score)});
    }
    return table;
}

}  // namespace embed::pages

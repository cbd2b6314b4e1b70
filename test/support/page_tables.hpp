#pragma once
// Reading back the tables the tools print, as a reader would see them: an HTML
// table of the page writer (tools/pages) by its id, the Markdown tables of a
// file, and whether a printed number is a value rounded for a person (6
// significant digits; NaN, +inf and -inf spelled so). Written from the
// formats, not from the code under test, so the tests compare the printed
// numbers with the JSON's independently.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace embed_test {

/// One th or td: its text as shown (tags dropped, character references read) and its attributes.
struct HtmlCell {
    std::string text;
    std::map<std::string, std::string> attributes;

    /// The attribute's value, or "" when the cell has none; has(name) tells the two apart.
    std::string attribute(const std::string& name) const {
        const auto found = attributes.find(name);
        return found == attributes.end() ? "" : found->second;
    }
    bool has(const std::string& name) const { return attributes.count(name) > 0; }
};

/// A table: its column headings (the thead's cells, none without a thead) and its body rows.
struct HtmlTable {
    std::vector<std::string> headings;
    std::vector<std::vector<HtmlCell>> rows;

    /// The index of the column headed heading; throws std::runtime_error when there is none.
    std::size_t column(const std::string& heading) const {
        for (std::size_t i = 0; i < headings.size(); ++i) {
            if (headings[i] == heading) return i;
        }
        throw std::runtime_error("no column headed " + heading);
    }
};

/// Text with the references the page writer writes (&amp; &lt; &gt; &quot; &#39;) read back.
inline std::string unescape_html(const std::string& text) {
    static const std::vector<std::pair<std::string, std::string>> references = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
        bool replaced = false;
        for (const auto& [reference, character] : references) {
            if (text.compare(at, reference.size(), reference) == 0) {
                out += character;
                at += reference.size();
                replaced = true;
                break;
            }
        }
        if (!replaced) out += text[at++];
    }
    return out;
}

/// The attributes of a start tag's inside ("td class=\"number\" data-value=\"1\""), each name="value".
inline std::map<std::string, std::string> html_attributes(const std::string& tag) {
    std::map<std::string, std::string> attributes;
    for (std::size_t at = tag.find('='); at != std::string::npos; at = tag.find('=', at + 1)) {
        const std::size_t name_start = tag.rfind(' ', at) + 1;
        if (at + 1 >= tag.size() || tag[at + 1] != '"') continue;
        const std::size_t value_end = tag.find('"', at + 2);
        attributes[tag.substr(name_start, at - name_start)] = unescape_html(tag.substr(at + 2, value_end - at - 2));
        at = value_end;
    }
    return attributes;
}

/// Text with its tags dropped and its references read.
inline std::string html_text(const std::string& markup) {
    std::string text;
    bool in_tag = false;
    for (const char c : markup) {
        if (c == '<') in_tag = true;
        else if (c == '>') in_tag = false;
        else if (!in_tag) text += c;
    }
    return unescape_html(text);
}

/// The cells (th and td) of one row's markup, in order (the page writer nests no table in a cell).
inline std::vector<HtmlCell> html_cells(const std::string& row) {
    std::vector<HtmlCell> cells;
    for (std::size_t at = 0;;) {
        // "<th " or "<th>", not "<thead>".
        const auto tag_at = [&](const char* tag) {
            std::size_t found = row.find(tag, at);
            while (found != std::string::npos && found + 3 < row.size() && row[found + 3] != ' ' && row[found + 3] != '>') {
                found = row.find(tag, found + 1);
            }
            return found;
        };
        const std::size_t td = tag_at("<td");
        const std::size_t th = tag_at("<th");
        const std::size_t start = std::min(td, th);
        if (start == std::string::npos) break;
        const std::string name = start == td ? "td" : "th";
        const std::size_t tag_end = row.find('>', start);
        const std::size_t close = row.find("</" + name + ">", tag_end);
        if (tag_end == std::string::npos || close == std::string::npos) throw std::runtime_error("a cell is not closed");
        cells.push_back({html_text(row.substr(tag_end + 1, close - tag_end - 1)),
                         html_attributes(row.substr(start + 1, tag_end - start - 1))});
        at = close + name.size() + 3;
    }
    return cells;
}

/// The table element with id="id" in html; throws std::runtime_error when there is none.
inline HtmlTable html_table(const std::string& html, const std::string& id) {
    const std::size_t named = html.find("<table class=\"sortable\" id=\"" + id + "\"") != std::string::npos
                                  ? html.find("<table class=\"sortable\" id=\"" + id + "\"")
                                  : html.find("<table class=\"numbers\" id=\"" + id + "\"");
    if (named == std::string::npos) throw std::runtime_error("the page has no table with id " + id);
    const std::string table = html.substr(named, html.find("</table>", named) - named);
    HtmlTable parsed;
    const std::size_t head_end = table.find("</thead>");
    if (head_end != std::string::npos) {
        for (const HtmlCell& cell : html_cells(table.substr(0, head_end))) parsed.headings.push_back(cell.text);
    }
    const std::size_t body = table.find("<tbody>");
    for (std::size_t at = table.find("<tr", body == std::string::npos ? 0 : body); at != std::string::npos;
         at = table.find("<tr", at + 1)) {
        const std::size_t end = table.find("</tr>", at);
        parsed.rows.push_back(html_cells(table.substr(at, end - at)));
    }
    return parsed;
}

/// A Markdown table: headings and rows of cells, each trimmed, "\|" read as "|".
struct MarkdownTable {
    std::vector<std::string> headings;
    std::vector<std::vector<std::string>> rows;
};

/// The cells of one "| a | b |" line, split at each '|' that no backslash escapes.
inline std::vector<std::string> markdown_cells(const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
            cell += '|';
            ++i;
        } else if (line[i] == '|') {
            const auto first = cell.find_first_not_of(' ');
            const auto last = cell.find_last_not_of(' ');
            cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    return cells;
}

/// Every table of a Markdown text, in order: a run of lines that start with '|', the second one the
/// alignment row.
inline std::vector<MarkdownTable> markdown_tables(const std::string& markdown) {
    std::vector<MarkdownTable> tables;
    std::vector<std::string> run;
    const auto close = [&] {
        if (run.size() >= 2) {
            MarkdownTable table{markdown_cells(run[0]), {}};
            for (std::size_t i = 2; i < run.size(); ++i) table.rows.push_back(markdown_cells(run[i]));
            tables.push_back(std::move(table));
        }
        run.clear();
    };
    std::size_t at = 0;
    while (at <= markdown.size()) {
        const std::size_t end = std::min(markdown.find('\n', at), markdown.size());
        const std::string line = markdown.substr(at, end - at);
        if (!line.empty() && line[0] == '|') run.push_back(line);
        else close();
        at = end + 1;
    }
    close();
    return tables;
}

/// Whether shown is value as a person should read it: "NaN" for NaN, "+inf" / "-inf" for the infinities,
/// else a decimal of at most 6 significant digits within half a unit of its 6th digit of value.
inline testing::AssertionResult shows_rounded(const std::string& shown, double value) {
    if (std::isnan(value) || std::isinf(value)) {
        const std::string wanted = std::isnan(value) ? "NaN" : (value > 0 ? "+inf" : "-inf");
        if (shown == wanted) return testing::AssertionSuccess();
        return testing::AssertionFailure() << "'" << shown << "' shows " << value << ", which reads '" << wanted << "'";
    }
    char* end = nullptr;
    const double read = std::strtod(shown.c_str(), &end);
    if (shown.empty() || *end != '\0') return testing::AssertionFailure() << "'" << shown << "' is not a number";
    int digits = 0;
    bool leading = true;
    for (const char c : shown.substr(0, shown.find_first_of("eE"))) {
        if (c < '0' || c > '9') continue;
        if (c != '0') leading = false;
        if (!leading) ++digits;
    }
    if (digits > 6) return testing::AssertionFailure() << "'" << shown << "' has " << digits << " significant digits";
    if (value == 0.0) {
        return read == 0.0 ? testing::AssertionSuccess()
                           : testing::AssertionFailure() << "'" << shown << "' shows 0";
    }
    const double half_unit = 0.5 * std::pow(10.0, std::floor(std::log10(std::fabs(value))) - 5);
    if (std::fabs(read - value) <= half_unit * (1 + 1e-9)) return testing::AssertionSuccess();
    return testing::AssertionFailure() << "'" << shown << "' is not " << value << " to 6 significant digits";
}

/// A number as a data-value or title holds it in full: JavaScript's "NaN" / "Infinity" or the page's
/// "+inf" / "-inf", else a decimal read whole.
inline double full_value(const std::string& text) {
    if (text == "NaN") return std::nan("");
    if (text == "Infinity" || text == "+inf") return INFINITY;
    if (text == "-Infinity" || text == "-inf") return -INFINITY;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw std::runtime_error("'" + text + "' is not a number in full");
    return value;
}

}  // namespace embed_test

#pragma once
// One self-contained HTML page for the tools: escaping, an inline-styled
// document, a sortable table, a section of numbers and an inline SVG figure.
// Nothing is fetched: no external script, style, font or image, and a
// Content-Security-Policy of default-src 'none' blocks anything else.

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace embed::pages {

/// text (any bytes) as HTML character data: & < > escaped; control characters (C0, DEL, C1) and bytes that
/// are not UTF-8 shown visibly in a span of class "ctl" ("\n" as a marked U+240A, 0x85 as "<U+0085>", a bad
/// byte as "\xFF"), so no token text can vanish, break the markup or pass for another.
std::string escape_text(std::string_view text);

/// text (any bytes) as a double-quoted attribute value: & < > " ' escaped, control characters and bad bytes
/// in the same visible form as escape_text without the span.
std::string escape_attribute(std::string_view text);

/// A number as the sortable table's script reads it (JavaScript's Number()): the shortest text that
/// round-trips, "NaN" for any NaN, "Infinity" / "-Infinity".
std::string sort_key(double value);

/// A number as a person reads it on a page: 6 significant digits ("%.6g": 0.123457, 2783, 1.5e-07),
/// "NaN" for any NaN, "+inf" / "-inf" for the infinities.
std::string shown_number(double value);

/// A number in full: the shortest text that round-trips (as JSON writes it), with shown_number's spellings
/// of NaN and the infinities. A rounded cell carries it as its title.
std::string full_number(double value);

/// One cell: what it shows and, for a numeric column, the number it sorts by.
struct Cell {
    std::string text;
    double number = 0.0;  // used only in a numeric column
};

/// A numeric column's cell for value: shown_number's text, value to sort by.
Cell number_cell(double value);

/// A table whose rows the reader can sort by clicking a column's header.
struct SortableTable {
    enum class Kind { number, text };
    struct Column {
        std::string heading;
        Kind kind = Kind::text;
    };
    std::string id;       // the element id, unique within the page
    std::string caption;  // shown above the table
    std::vector<Column> columns;
    std::vector<std::vector<Cell>> rows;  // (rows, columns.size())
};

/// One line of a run's numbers: its name, the value as shown and, when that is rounded, the value in full
/// (shown as the value's title, on hover); empty when the shown value is already whole.
struct Number {
    Number(std::string name_, std::string value_, std::string full_ = {})
        : name(std::move(name_)), value(std::move(value_)), full(std::move(full_)) {}
    std::string name;
    std::string value;
    std::string full;
};

/// The numbers of a run, in the order given.
using Numbers = std::vector<Number>;

/// Builds a page's body piece by piece; str() wraps it in the document with its style and, when a table
/// was added, the sorting script.
class Page {
public:
    /// title is the document's title and its first heading.
    explicit Page(std::string title);

    /// A section heading (h2).
    void heading(std::string_view text);
    /// A paragraph of plain text.
    void paragraph(std::string_view text);
    /// A section of numbers: a two-column table, names and values as text; id names the table element.
    void numbers(std::string_view id, const Numbers& numbers);
    /// A sortable table: a click anywhere in a column's header (or Enter / Space on its button) sorts by it.
    /// A numeric cell carries its number as data-value (what the sort reads) and, when its text is rounded,
    /// full_number as its title. A text column whose cells are all empty (in a table with rows) is left out.
    /// Throws std::invalid_argument when a row's width differs from the columns' count.
    void table(const SortableTable& table);
    /// An SVG document inlined as a figure (its XML declaration dropped) with a caption; the SVG is the
    /// tool's own trusted markup, not escaped.
    void figure(std::string_view svg, std::string_view caption);

    /// The whole document: doctype, head (charset, CSP, viewport, title, style), body, script.
    std::string str() const;

private:
    std::string title_;
    std::string body_;
    bool has_table_ = false;
};

/// One entry of a ranked list: a token id and its score.
struct RankedId {
    long long id = 0;
    double score = 0.0;
};

/// A table of a ranked list (n): rank (1-based), id, the id's text and score (shown_number), best first. The
/// text is names[id] when names is given and holds id, else empty (a tool that reads no vocabulary passes
/// none, and the page then leaves the empty column out).
SortableTable ranked_table(std::string id, std::string caption, std::string score_heading,
                           std::span<const RankedId> ranked, std::span<const std::string> names = {});

}  // namespace embed::pages

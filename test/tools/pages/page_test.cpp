// The page writer's pieces as text: escaping of hostile token texts, the sort keys the script reads,
// the table's refusal of ragged rows, and a document that refers to nothing outside itself. The
// behaviour in a browser (sorting, drawing, no fetch) is test_page_writer.py's.

#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <page.hpp>

namespace {

using embed::pages::escape_attribute;
using embed::pages::escape_text;
using testing::HasSubstr;
using testing::Not;

// The marked stand-in escape_text puts for a control character or a bad byte.
std::string marked(const std::string& shown) { return "<span class=\"ctl\">" + shown + "</span>"; }

// "a" + marked(x) + "b" spelled as a join: GCC 12 warns falsely (-Wrestrict) on operator+ of a literal and a temporary.
std::string join(std::initializer_list<std::string> pieces) {
    std::string text;
    for (const std::string& piece : pieces) text += piece;
    return text;
}

TEST(PageEscaping, MarkupCharactersBecomeReferences) {
    EXPECT_EQ(escape_text("a<b>&c"), "a&lt;b&gt;&amp;c");
    EXPECT_EQ(escape_text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
    EXPECT_EQ(escape_text("\"q\" 'r'"), "\"q\" 'r'") << "quotes are plain in text";
    EXPECT_EQ(escape_attribute("\"q\" 'r' <&>"), "&quot;q&quot; &#39;r&#39; &lt;&amp;&gt;");
}

TEST(PageEscaping, ValidUtf8PassesThroughUnchanged) {
    const std::string text = "caf\xC3\xA9 \xED\x95\x9C \xF0\x9F\x98\x80 \xEF\xBF\xBF";  // é, 한, U+1F600, U+FFFF
    EXPECT_EQ(escape_text(text), text);
    EXPECT_EQ(escape_attribute(text), text);
}

TEST(PageEscaping, ControlCharactersAreShownVisibly) {
    // C0 as the control pictures U+2400 + c (UTF-8 E2 90 80 + c), DEL as U+2421, C1 as <U+00XX>.
    EXPECT_EQ(escape_text(std::string("a\0b", 3)), join({"a", marked("\xE2\x90\x80"), "b"}));
    EXPECT_EQ(escape_text("\n"), marked("\xE2\x90\x8A"));
    EXPECT_EQ(escape_text("\t\x1F"), marked("\xE2\x90\x89") + marked("\xE2\x90\x9F"));
    EXPECT_EQ(escape_text("\x7F"), marked("\xE2\x90\xA1"));
    EXPECT_EQ(escape_text("\xC2\x85"), marked("&lt;U+0085&gt;"));
    EXPECT_EQ(escape_text("\xC2\x9F"), marked("&lt;U+009F&gt;"));
    EXPECT_EQ(escape_text("\xC2\xA0"), "\xC2\xA0") << "U+00A0 is past C1";
    EXPECT_EQ(escape_attribute("\n\xC2\x85"), "\xE2\x90\x8A&lt;U+0085&gt;") << "no markup inside an attribute";
}

TEST(PageEscaping, BytesThatAreNotUtf8AreShownOneByOne) {
    EXPECT_EQ(escape_text("\xFF"), marked("\\xFF"));
    EXPECT_EQ(escape_text("a\x80z"), join({"a", marked("\\x80"), "z"})) << "a stray continuation byte";
    EXPECT_EQ(escape_text("\xC0\x80"), marked("\\xC0") + marked("\\x80")) << "overlong NUL";
    EXPECT_EQ(escape_text("\xED\xA0\x80"), marked("\\xED") + marked("\\xA0") + marked("\\x80")) << "a surrogate";
    EXPECT_EQ(escape_text("\xF4\x90\x80\x80"), marked("\\xF4") + marked("\\x90") + marked("\\x80") + marked("\\x80"))
        << "past U+10FFFF";
    EXPECT_EQ(escape_text("\xE2\x82"), marked("\\xE2") + marked("\\x82")) << "cut short at the end";
    EXPECT_EQ(escape_text("\xE2\x82<"), marked("\\xE2") + marked("\\x82") + "&lt;") << "cut short by ASCII";
    EXPECT_EQ(escape_attribute("\xFF\""), "\\xFF&quot;");
}

TEST(PageSortKey, IsWhatJavaScriptsNumberReadsBack) {
    EXPECT_EQ(embed::pages::sort_key(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(embed::pages::sort_key(-std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(embed::pages::sort_key(std::numeric_limits<double>::infinity()), "Infinity");
    EXPECT_EQ(embed::pages::sort_key(-std::numeric_limits<double>::infinity()), "-Infinity");
    EXPECT_EQ(embed::pages::sort_key(0.1), "0.1");
    EXPECT_EQ(embed::pages::sort_key(-0.0), "-0");
    EXPECT_EQ(embed::pages::sort_key(1e300), "1e+300");
    EXPECT_EQ(embed::pages::sort_key(137.0), "137");
}

TEST(PageNumbers, AreShownToSixSignificantDigitsAndKeptInFull) {
    const double inf = std::numeric_limits<double>::infinity();
    // Expected texts worked out by hand: round half to even is not at stake, each is clear of a tie.
    EXPECT_EQ(embed::pages::shown_number(1.0 / 3.0), "0.333333");
    EXPECT_EQ(embed::pages::shown_number(2783.0), "2783");
    EXPECT_EQ(embed::pages::shown_number(123456789.0), "1.23457e+08");
    EXPECT_EQ(embed::pages::shown_number(-0.000012345678), "-1.23457e-05");
    EXPECT_EQ(embed::pages::shown_number(0.1), "0.1");
    EXPECT_EQ(embed::pages::shown_number(inf), "+inf");
    EXPECT_EQ(embed::pages::shown_number(-inf), "-inf");
    EXPECT_EQ(embed::pages::shown_number(-std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(embed::pages::full_number(1.0 / 3.0), "0.3333333333333333");
    EXPECT_EQ(embed::pages::full_number(2783.0), "2783");
    EXPECT_EQ(embed::pages::full_number(inf), "+inf");
    EXPECT_EQ(embed::pages::full_number(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

// The HTML of a one-table page, from the table's start to its end.
std::string table_html(const embed::pages::SortableTable& table) {
    embed::pages::Page page("t");
    page.table(table);
    const std::string html = page.str();
    const auto from = html.find("<table");
    return html.substr(from, html.find("</table>") - from);
}

TEST(PageTable, ANumberCellCarriesItsFullValueToSortAndToRead) {
    using Kind = embed::pages::SortableTable::Kind;
    const double inf = std::numeric_limits<double>::infinity();
    const embed::pages::SortableTable table{
        "n", "c", {{"x", Kind::number}},
        {{embed::pages::number_cell(1.0 / 3.0)}, {embed::pages::number_cell(2783.0)}, {embed::pages::number_cell(-inf)}}};
    const std::string html = table_html(table);
    EXPECT_THAT(html, HasSubstr("<td class=\"number\" data-value=\"0.3333333333333333\" title=\"0.3333333333333333\">"
                                "0.333333</td>"));
    EXPECT_THAT(html, HasSubstr("<td class=\"number\" data-value=\"2783\">2783</td>")) << "nothing rounded, no title";
    EXPECT_THAT(html, HasSubstr("<td class=\"number\" data-value=\"-Infinity\">-inf</td>"));
}

TEST(PageTable, LeavesOutATextColumnWithNothingInIt) {
    using Kind = embed::pages::SortableTable::Kind;
    embed::pages::SortableTable table{
        "e", "c", {{"id", Kind::number}, {"text", Kind::text}, {"score", Kind::number}},
        {{{"1", 1.0}, {"", 0.0}, {"0.5", 0.5}}, {{"2", 2.0}, {"", 0.0}, {"0.25", 0.25}}}};
    std::string html = table_html(table);
    EXPECT_THAT(html, Not(HasSubstr(">text</button>")));
    EXPECT_THAT(html, HasSubstr("<tr data-order=\"0\"><td class=\"number\" data-value=\"1\">1</td>"
                                "<td class=\"number\" data-value=\"0.5\">0.5</td></tr>"));
    table.rows[1][1].text = "b";
    html = table_html(table);
    EXPECT_THAT(html, HasSubstr(">text</button>")) << "one text is enough to keep the column";
    EXPECT_THAT(html, HasSubstr("<td class=\"number\" data-value=\"1\">1</td><td></td>"));
    table.rows.clear();
    EXPECT_THAT(table_html(table), HasSubstr(">text</button>")) << "a table without rows keeps its headings";
}

TEST(PageNumbersSection, ARoundedValueHasItsFullTextAsTitle) {
    embed::pages::Page page("t");
    page.numbers("numbers", {{"plain", "12", ""}, {"rounded", "0.333333", "0.3333333333333333"}});
    const std::string html = page.str();
    EXPECT_THAT(html, HasSubstr("<tr><th scope=\"row\">plain</th><td>12</td></tr>"));
    EXPECT_THAT(html, HasSubstr("<tr><th scope=\"row\">rounded</th><td title=\"0.3333333333333333\">0.333333</td></tr>"));
}

TEST(PageTable, RefusesARowOfTheWrongWidthNamingTheTableAndRow) {
    embed::pages::Page page("t");
    embed::pages::SortableTable table{"ragged", "", {{"a", embed::pages::SortableTable::Kind::text}}, {{{"x"}}, {}}};
    try {
        page.table(table);
        FAIL() << "a row of 0 cells under 1 column was accepted";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(), "table ragged: row 1 has 0 cells, the columns are 1");
    }
}

TEST(PageTable, RankedTableTakesTheNamesOfTheIdsItHas) {
    const std::vector<embed::pages::RankedId> ranked = {{2, 0.5}, {7, std::nan("")}, {0, -1.0}};
    const std::vector<std::string> names = {"zero", "one", "two<"};
    const auto table = embed::pages::ranked_table("t", "c", "cosine", ranked, names);
    ASSERT_EQ(table.rows.size(), 3u);
    EXPECT_EQ(table.rows[0][0].text, "1");
    EXPECT_EQ(table.rows[0][1].text, "2");
    EXPECT_EQ(table.rows[0][2].text, "two<") << "escaped when written, not here";
    EXPECT_EQ(table.rows[1][2].text, "") << "id 7 is past the names";
    EXPECT_EQ(table.rows[1][3].text, "NaN");
    EXPECT_TRUE(std::isnan(table.rows[1][3].number));
    EXPECT_EQ(table.rows[2][3].text, "-1");
    EXPECT_EQ(embed::pages::ranked_table("t", "c", "cosine", ranked).rows[0][2].text, "") << "no names given";
}

TEST(PageDocument, IsSelfContainedWithAPolicyThatFetchesNothing) {
    embed::pages::Page page("a <title>");
    page.paragraph("text");
    std::string html = page.str();
    EXPECT_THAT(html, testing::StartsWith("<!DOCTYPE html>\n"));
    EXPECT_THAT(html, HasSubstr("<title>a &lt;title&gt;</title>"));
    EXPECT_THAT(html, HasSubstr("content=\"default-src 'none';"));
    EXPECT_THAT(html, Not(HasSubstr("<script"))) << "no table, no script";
    page.table(embed::pages::ranked_table("t", "c", "s", std::vector<embed::pages::RankedId>{{1, 1.0}}));
    page.figure("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n", "f");
    html = page.str();
    EXPECT_THAT(html, HasSubstr("<script>"));
    EXPECT_THAT(html, Not(HasSubstr("<?xml"))) << "an XML declaration is not allowed inside HTML";
    EXPECT_THAT(html, HasSubstr("<figure>\n<svg xmlns"));
    for (const char* fetching : {"src=", "href=", "<link", "@import", "url("}) EXPECT_THAT(html, Not(HasSubstr(fetching)));
}

}  // namespace

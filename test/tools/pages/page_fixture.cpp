// Writes a page that exercises the page writer in a browser (test_page_writer.py): token texts with
// markup, quotes, control characters, bad bytes and characters outside the BMP, and scores with ties,
// NaN and infinities. usage: page_fixture OUT.html

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <page.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: page_fixture OUT.html\n");
        return 2;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // U+1F600 sorts after U+FFFF by code point, before it by UTF-16 unit: the text sort must tell them apart.
    const std::vector<std::string> names = {
        "<script>alert(1)</script>", "a&b", "\"quoted\" 'single'", "line\nbreak", "bad\xFF" "byte",
        "next\xC2\x85line", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF", "B", "a", "", "\xC3\xA9", "a"};
    const std::vector<embed::pages::RankedId> ranked = {
        {0, 0.5}, {1, nan}, {2, 0.5}, {3, -inf}, {4, 2.0}, {5, nan}, {6, inf},
        {7, -0.25}, {8, 0.5}, {9, 1e-300}, {10, -3.0}, {11, 1.0 / 3.0}, {12, 0.5}};
    embed::pages::Page page("page writer fixture");
    page.paragraph("Every text below is a token's text as a vocabulary may hold it.");
    page.numbers("numbers", {{"rows", std::to_string(ranked.size())}, {"a long value", std::string(400, '7')}});
    page.table(embed::pages::ranked_table("tokens", "hostile token texts", "score", ranked, names));
    page.figure("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"100\" viewBox=\"0 0 200 100\">"
                "<rect x=\"10\" y=\"10\" width=\"80\" height=\"80\" fill=\"#c03\"/>"
                "<circle cx=\"150\" cy=\"50\" r=\"40\" fill=\"#06c\"/></svg>\n",
                "two shapes");
    std::ofstream out(argv[1], std::ios::binary);
    out << page.str();
    out.close();
    if (!out) {
        std::fprintf(stderr, "page_fixture: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}

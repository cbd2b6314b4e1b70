// embed_compare on the files people hold, each written here and compared by the built tool:
//   - a table against its Q8_0 and Q4_K GGUF copies, and an F16 GGUF against the Q4_K one: Q8_0 must come out
//     closer than Q4_K on every measure, and within the error Q8_0's blocks allow;
//   - a table against its copy rotated by a random orthogonal matrix: identical after alignment, the rotation
//     fitted the one planted, and every row moved without alignment;
//   - a checkpoint folder against a fine-tuned copy (edit_model adding tokens, then a few named rows changed),
//     matched by text: those rows, by their text, head the ranking and are the ones the page marks;
//   - two models sharing a GPT-2 byte-level tokenizer, one padded past its vocabulary, matched by text.
// What each file holds is planted here; the expected answers come from that, never from the tool. Each page
// must show it: the verdict in its summary, the histogram's bars, the scatter's marked rows.
//
// Shapes are small for ctest. EMBED_COMPARE_REAL_SHAPES=1 runs every case at GPT-2's shape (50257 x 768) and
// prints the measures (the numbers tools/compare/README.md reports).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/QR>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <embed/edit_model.hpp>
#include <embed/io.hpp>

#include "file_bytes.hpp"
#include "page_tables.hpp"
#include "tool_run.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::TableF32;
using embed_test::TempDir;
using Json = nlohmann::json;

bool real_shapes() {
    const char* value = std::getenv("EMBED_COMPARE_REAL_SHAPES");
    return value != nullptr && std::string(value) == "1";
}

constexpr Index kGpt2Rows = 50257;
constexpr Index kGpt2Width = 768;

/// Rows of a GPT-2-like table: normal values of standard deviation 0.12 (GPT-2's wte rows have norms near 3).
Table gaussian_table(Index rows, Index cols, std::uint64_t seed, double scale = 0.12) {
    std::mt19937_64 generator(seed);
    std::normal_distribution<double> normal(0.0, scale);
    Table table(rows, cols);
    for (Index r = 0; r < rows; ++r) {
        for (Index c = 0; c < cols; ++c) table(r, c) = normal(generator);
    }
    return table;
}

/// A random orthogonal (d, d) matrix: the Q of a Gaussian matrix's QR, its columns' signs fixed by R's diagonal
/// (so the draw is uniform over the orthogonal group).
Table random_orthogonal(Index d, std::uint64_t seed) {
    const Table gaussian = gaussian_table(d, d, seed, 1.0);
    const Eigen::HouseholderQR<Table> qr(gaussian);
    Table q = qr.householderQ() * Table::Identity(d, d);
    const Table r = qr.matrixQR().triangularView<Eigen::Upper>();
    for (Index c = 0; c < d; ++c) {
        if (r(c, c) < 0) q.col(c) *= -1.0;
    }
    return q;
}

double row_cosine(const Table& a, const Table& b, Index row_a, Index row_b) {
    double dot = 0, aa = 0, bb = 0;
    for (Index c = 0; c < a.cols(); ++c) {
        dot += a(row_a, c) * b(row_b, c);
        aa += a(row_a, c) * a(row_a, c);
        bb += b(row_b, c) * b(row_b, c);
    }
    return dot / std::sqrt(aa * bb);
}

/// The tool run in dir on args; its JSON, Markdown and page, after checking it exited 0.
struct Compared {
    Json json;
    std::string markdown;
    std::string html;
};

Compared compare(const std::filesystem::path& dir, std::vector<std::string> args) {
    args.insert(args.end(), {"--out-dir", dir.string()});
    const embed_test::ToolRun run = embed_test::run_tool(EMBED_COMPARE_EXE, dir, args);
    EXPECT_EQ(run.status, 0) << run.err;
    Compared out{Json::parse(embed_test::read_file(dir / "embed_compare.json")),
                 embed_test::read_file(dir / "embed_compare.md"), embed_test::read_file(dir / "embed_compare.html")};
    if (real_shapes()) {
        const Json& j = out.json;
        double overlap = 0;
        for (const auto& x : j["neighbour_overlap"]) overlap += x.get<double>();
        std::cout << "[real shapes] " << args[0] << " vs " << args[1] << ": " << j["verdict"]["summary"]
                  << "; median row cosine " << j["percentiles"]["row_cosine"]["50"] << ", p1 "
                  << j["percentiles"]["row_cosine"]["1"] << "; mean neighbour overlap "
                  << overlap / static_cast<double>(j["neighbour_overlap"].size()) << "; top-1 " << j["top1_agreement"]
                  << "; top-k " << j["topk_overlap"] << "; KL " << j["kl_divergence"] << "; max |dz| "
                  << j["max_abs_logit_diff"] << "\n";
    }
    return out;
}

double mean_overlap(const Json& j) {
    double sum = 0;
    for (const auto& x : j["neighbour_overlap"]) sum += x.get<double>();
    return sum / static_cast<double>(j["neighbour_overlap"].size());
}

// --- reading the page back as a reader's browser would draw it (the browser test checks the same in Chromium) ---

/// The svg element with id="id" in html, whole.
std::string svg_of(const std::string& html, const std::string& id) {
    const std::size_t at = html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" width");
    for (std::size_t open = at; open != std::string::npos; open = html.find("<svg ", open + 1)) {
        const std::size_t tag_end = html.find('>', open);
        if (html.substr(open, tag_end - open).find("id=\"" + id + "\"") == std::string::npos) continue;
        return html.substr(open, html.find("</svg>", open) + 6 - open);
    }
    ADD_FAILURE() << "the page has no svg " << id;
    return {};
}

/// Each occurrence's value of attribute name="..." in markup, in order.
std::vector<std::string> attribute_values(const std::string& markup, const std::string& name) {
    std::vector<std::string> values;
    const std::string key = " " + name + "=\"";
    for (std::size_t at = markup.find(key); at != std::string::npos; at = markup.find(key, at + 1)) {
        const std::size_t start = at + key.size();
        values.push_back(markup.substr(start, markup.find('"', start) - start));
    }
    return values;
}

/// The histogram's bar counts, left to right.
std::vector<Index> bar_counts(const std::string& html) {
    std::vector<Index> counts;
    for (const std::string& v : attribute_values(svg_of(html, "cosine-histogram"), "data-count")) {
        counts.push_back(std::stoll(v));
    }
    return counts;
}

/// How many points the scatter marks as moved, and how many it draws.
std::pair<std::size_t, std::size_t> scatter_points(const std::string& html) {
    const std::string svg = svg_of(html, "norm-scatter");
    std::size_t marked = 0, drawn = 0;
    for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
        ++drawn;
        // A circle's class lists its marks ("moved", "candidate-a", "candidate-b"), any of them first.
        const std::vector<std::string> classes = attribute_values(svg.substr(at, svg.find("/>", at) - at), "class");
        std::istringstream names(classes.empty() ? std::string() : classes[0]);
        for (std::string name; names >> name;) marked += name == "moved" ? 1 : 0;
    }
    return {marked, drawn};
}

/// The value the page's summary shows for name.
std::string summary_value(const std::string& html, const std::string& name) {
    for (const auto& row : embed_test::html_table(html, "summary").rows) {
        if (row.size() == 2 && row[0].text == name) return row[1].text;
    }
    ADD_FAILURE() << "the page's summary has no " << name;
    return {};
}

/// The verdict as the JSON, the Markdown and the page all say it.
void expect_verdict(const Compared& compared, const std::string& summary) {
    EXPECT_EQ(compared.json["verdict"]["summary"], summary);
    EXPECT_NE(compared.markdown.find("**" + summary + "**"), std::string::npos) << compared.markdown;
    EXPECT_EQ(summary_value(compared.html, "verdict"), summary);
}

// --- a GPT-2 byte-level tokenizer, written from GPT-2's bytes_to_unicode rule ---

/// GPT-2's byte -> code point map: printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for
/// themselves, the other 68 bytes take U+0100 onwards in byte order (so ' ' is U+0120 'Ġ', '\n' U+010A 'Ċ').
std::vector<char32_t> bytes_to_unicode() {
    std::vector<char32_t> map(256);
    char32_t next = 256;
    for (unsigned b = 0; b < 256; ++b) {
        const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
        map[b] = printable ? b : next++;
    }
    return map;
}

std::string utf8(char32_t code) {
    std::string out;
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return out;
}

/// text's bytes as GPT-2 stores them in its vocabulary.
std::string byte_level(const std::string& text) {
    static const std::vector<char32_t> map = bytes_to_unicode();
    std::string stored;
    for (const char c : text) stored += utf8(map[static_cast<unsigned char>(c)]);
    return stored;
}

/// A GPT-2-style vocabulary of rows tokens as a person reads them: the 256 bytes (ids 0-255, the ASCII letters
/// among them as themselves), then words with a leading space, then "<|endoftext|>" last, added as special.
std::vector<std::string> gpt2_like_texts(Index rows) {
    static const std::vector<std::string> words = {" the", " and", " of", " to", " in", " is", " that", " it",
                                                   " for", " was", " on", " with", " as", " he", " be", " at"};
    std::vector<std::string> texts;
    for (int b = 0; b < 256; ++b) texts.push_back(std::string(1, static_cast<char>(b)));
    for (Index i = 0; texts.size() + 1 < static_cast<std::size_t>(rows); ++i) {
        texts.push_back(i < static_cast<Index>(words.size()) ? words[static_cast<std::size_t>(i)]
                                                             : " w" + std::to_string(i));
    }
    texts.push_back("<|endoftext|>");
    return texts;
}

/// tokenizer.json (BPE, ByteLevel decoder) for texts, the last one the added special token.
std::string gpt2_like_tokenizer_json(const std::vector<std::string>& texts) {
    Json vocab = Json::object();
    for (std::size_t id = 0; id + 1 < texts.size(); ++id) vocab[byte_level(texts[id])] = id;
    const Json tokenizer = {
        {"version", "1.0"},
        {"added_tokens", {{{"id", texts.size() - 1}, {"content", texts.back()}, {"special", true}}}},
        {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
        {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}}},
        {"model", {{"type", "BPE"}, {"unk_token", nullptr}, {"vocab", vocab}, {"merges", Json::array()}}}};
    return tokenizer.dump();
}

/// A GPT-2-shaped checkpoint folder: config.json, model.safetensors (transformer.wte.weight as float32, tied)
/// and tokenizer.json for texts (which may be fewer than the table's rows: a padded table).
std::filesystem::path write_checkpoint(const std::filesystem::path& folder, const Table& wte,
                                       const std::vector<std::string>& texts) {
    std::filesystem::create_directories(folder);
    embed::save_table(folder / "model.safetensors", wte, "transformer.wte.weight", embed::ElementType::f32);
    embed_test::write_file(folder / "config.json",
                           Json{{"model_type", "gpt2"}, {"vocab_size", wte.rows()}, {"n_embd", wte.cols()},
                                {"tie_word_embeddings", true}}.dump());
    embed_test::write_file(folder / "tokenizer.json", gpt2_like_tokenizer_json(texts));
    return folder;
}

Index id_of(const std::vector<std::string>& texts, const std::string& text) {
    return static_cast<Index>(std::find(texts.begin(), texts.end(), text) - texts.begin());
}

// --- the cases ---

/// The most each row of table can change in Q8_0: every block of 32 stores round(x / s) with s = amax / 127
/// rounded to float16 (a relative error up to 2^-11), so each value is off by at most s / 2, plus float32's
/// rounding of the product; returned as that error's norm over the row's norm.
double q8_0_bound(const Table& table, Index row) {
    double error = 0, norm = 0;
    for (Index block = 0; block < table.cols(); block += 32) {
        double amax = 0;
        for (Index c = block; c < block + 32; ++c) amax = std::max(amax, std::abs(table(row, c)));
        const double step = amax / 127.0 * (1.0 + std::ldexp(1.0, -11));
        const double most = step / 2.0 + amax * std::ldexp(1.0, -23);
        error += 32.0 * most * most;
    }
    for (Index c = 0; c < table.cols(); ++c) norm += table(row, c) * table(row, c);
    return std::sqrt(error / norm);
}

TEST(CompareFiles, Q8CopyIsCloserThanQ4CopyAndWithinItsBlocksError) {
    const Index rows = real_shapes() ? kGpt2Rows : 300;
    const Index width = real_shapes() ? kGpt2Width : 256;  // Q4_K's blocks are 256 wide
    const std::string probes = real_shapes() ? "1000" : "100";
    TempDir dir;
    const Table table = gaussian_table(rows, width, 11);
    embed::save_table(dir.path() / "model.npy", table, {}, embed::ElementType::f32);
    embed::save_table(dir.path() / "model-f16.gguf", table, {}, embed::ElementType::f16);
    embed::save_table(dir.path() / "model-q8_0.gguf", table, {}, embed::ElementType::q8_0);
    embed::save_table(dir.path() / "model-q4_k.gguf", table, {}, embed::ElementType::q4_k);
    const Json q8 = compare(dir.path(), {"model.npy", "model-q8_0.gguf", "--probes", probes}).json;
    const Json q4 = compare(dir.path(), {"model.npy", "model-q4_k.gguf", "--probes", probes}).json;
    const Compared f16_q4 = compare(dir.path(), {"model-f16.gguf", "model-q4_k.gguf", "--probes", probes});

    // Q8_0 keeps more of each row than Q4_K: closer rows, neighbours and logits.
    EXPECT_GT(q8["percentiles"]["row_cosine"]["50"].get<double>(), q4["percentiles"]["row_cosine"]["50"].get<double>());
    EXPECT_GT(mean_overlap(q8), mean_overlap(q4));
    EXPECT_GE(q8["top1_agreement"].get<double>(), q4["top1_agreement"].get<double>());
    EXPECT_GT(q8["topk_overlap"].get<double>(), q4["topk_overlap"].get<double>());
    EXPECT_LT(q8["kl_divergence"].get<double>(), q4["kl_divergence"].get<double>());
    EXPECT_LT(q8["max_abs_logit_diff"].get<double>(), q4["max_abs_logit_diff"].get<double>());
    // Neither copy is the table: the neighbourhoods of a few hundred random rows, nearly equidistant, reorder
    // under Q4_K's error; Q8_0's error is small, but not float32 rounding.
    EXPECT_LT(mean_overlap(q4), 1.0);
    EXPECT_LT(q4["top1_agreement"].get<double>(), 1.0);
    EXPECT_EQ(q8["verdict"]["identical"], 0);

    // Q8_0's changes stay within what its blocks allow, row by row (the rows of lowest cosine, listed in moved),
    // so no row moved: the verdict is "close".
    for (const Json& moved : q8["moved"]) {
        const Index row = moved["a"].get<Index>();
        EXPECT_LE(moved["relative_change"].get<double>(), q8_0_bound(table, row)) << "row " << row;
    }
    EXPECT_EQ(q8["verdict"]["summary"], "close");
    // Q4_K keeps 16 levels per 32 values, off by at most a sixteenth of a sub-block's range (about 6 standard
    // deviations of Gaussian values, so 0.4 of one): a row's cosine stays above 0.95 and no row moved either.
    EXPECT_GT(q4["moved"][0]["row_cosine"].get<double>(), 0.95);
    if (!real_shapes()) {
        EXPECT_EQ(q4["verdict"]["summary"], "close");
        // The F16 file against the Q4_K one: float16's rounding is far below Q4_K's error, so it is Q4_K's
        // comparison again, close to the float32 table's.
        expect_verdict(f16_q4, "close");
        EXPECT_NEAR(f16_q4.json["percentiles"]["row_cosine"]["50"].get<double>(),
                    q4["percentiles"]["row_cosine"]["50"].get<double>(), 1e-4);
        // The page: every pair in the histogram's bars, none marked as moved in the scatter, one point each.
        const std::vector<Index> bars = bar_counts(f16_q4.html);
        Index total = 0;
        for (const Index count : bars) total += count;
        EXPECT_EQ(total, rows);
        EXPECT_EQ(scatter_points(f16_q4.html), std::make_pair(std::size_t{0}, static_cast<std::size_t>(rows)));
    }
}

TEST(CompareFiles, RotatedCopyIsIdenticalAfterAlignment) {
    const Index rows = real_shapes() ? kGpt2Rows : 300;
    const Index width = real_shapes() ? kGpt2Width : 24;
    TempDir dir;
    const Table table = gaussian_table(rows, width, 21);
    const Table rotation = random_orthogonal(width, 22);
    embed::save_table(dir.path() / "a.npy", table, {}, embed::ElementType::f32);
    embed::save_table(dir.path() / "rotated.npy", Table(table * rotation), {}, embed::ElementType::f32);

    const Compared aligned = compare(dir.path(), {"a.npy", "rotated.npy", "--align", "orthogonal", "--probes", "200"});
    expect_verdict(aligned, "identical after alignment");
    EXPECT_EQ(aligned.json["verdict"]["identical"], rows);
    // The rotation fitted is the one planted, up to float32's rounding of the files.
    const Json& fitted = aligned.json["rotation"];
    ASSERT_EQ(fitted.size(), static_cast<std::size_t>(width));
    for (Index r = 0; r < width; ++r) {
        for (Index c = 0; c < width; ++c) {
            EXPECT_NEAR(fitted[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)].get<double>(), rotation(r, c),
                        1e-5) << r << ", " << c;
        }
    }
    // A rotation keeps every cosine between rows and every logit against a rotated hidden vector.
    EXPECT_EQ(mean_overlap(aligned.json), 1.0);
    EXPECT_EQ(aligned.json["top1_agreement"], 1.0);
    // The page: every pair in the histogram's last bar (cosine 1), none marked.
    const std::vector<Index> bars = bar_counts(aligned.html);
    ASSERT_FALSE(bars.empty());
    EXPECT_EQ(bars.back(), rows);
    EXPECT_EQ(scatter_points(aligned.html).first, 0U);

    // Without alignment every row points elsewhere (a random rotation leaves no row within cosine 0.99 of itself
    // here: the test's own cosines say so), and the page marks all of them.
    const Table rotated = table * rotation;
    Index far = 0;
    for (Index r = 0; r < rows; ++r) far += row_cosine(table, rotated, r, r) < 0.99 ? 1 : 0;
    ASSERT_EQ(far, rows);
    const Compared unaligned = compare(dir.path(), {"a.npy", "rotated.npy", "--probes", "200"});
    expect_verdict(unaligned, std::to_string(rows) + " of " + std::to_string(rows) + " rows moved");
    if (!real_shapes()) {
        EXPECT_EQ(scatter_points(unaligned.html), std::make_pair(static_cast<std::size_t>(rows),
                                                                 static_cast<std::size_t>(rows)));
    }
}

TEST(CompareFiles, FineTunedCheckpointWithAddedTokensNamesTheMovedRowsByText) {
    const Index rows = real_shapes() ? kGpt2Rows : 300;
    const Index width = real_shapes() ? kGpt2Width : 16;
    TempDir dir;
    const std::vector<std::string> texts = gpt2_like_texts(rows);
    const Table wte = gaussian_table(rows, width, 31);
    const std::filesystem::path base = write_checkpoint(dir.path() / "base", wte, texts);
    embed::ModelEdits edits;
    edits.add_tokens = {"<|im_start|>", "<|im_end|>"};
    edits.special = true;
    const std::filesystem::path tuned = dir.path() / "tuned";
    const embed::EditRecord record = embed::edit_model(base, tuned, edits);
    ASSERT_EQ(record.rows_after, rows + 2);

    // Fine-tuning moved three rows: each replaced by a new direction of the same size.
    const std::vector<std::string> retrained = {" the", "\n", "<|endoftext|>"};
    TableF32 tuned_wte = embed::load_table_f32(tuned / "model.safetensors", "transformer.wte.weight");
    const Table fresh = gaussian_table(static_cast<Index>(retrained.size()), width, 32);
    for (std::size_t i = 0; i < retrained.size(); ++i) {
        tuned_wte.row(id_of(texts, retrained[i])) = fresh.row(static_cast<Index>(i)).cast<float>();
    }
    embed::save_table(tuned / "model.safetensors", tuned_wte, "transformer.wte.weight");

    const Compared run = compare(dir.path(), {"base", "tuned", "--match", "text", "--probes", "100"});
    EXPECT_EQ(run.json["matched"], rows);
    EXPECT_EQ(run.json["unmatched_a"], 0);
    EXPECT_EQ(run.json["unmatched_b"], 2);  // the added tokens
    std::set<std::string> top;
    for (std::size_t i = 0; i < retrained.size(); ++i) top.insert(run.json["moved"][i]["text"].get<std::string>());
    EXPECT_EQ(top, std::set<std::string>(retrained.begin(), retrained.end()));
    // The text is the token as a person reads it (" the", not GPT-2's stored "Ġthe"), and the next row down did
    // not move.
    EXPECT_GT(run.json["moved"][retrained.size()]["row_cosine"].get<double>(), 0.99999);
    const std::string moved = std::to_string(retrained.size()) + " of " + std::to_string(rows) + " rows moved";
    expect_verdict(run, moved + ", the others identical");
    // The page lists them first in its table, by text, and marks exactly them in the scatter.
    const embed_test::HtmlTable table = embed_test::html_table(run.html, "moved");
    const std::size_t text_column = table.column("text");
    std::set<std::string> listed;
    for (std::size_t i = 0; i < retrained.size(); ++i) listed.insert(table.rows[i][text_column].text);
    // The page shows "\n" as the control picture U+240A, as the page writer shows every control character.
    EXPECT_EQ(listed, std::set<std::string>({" the", "\u240a", "<|endoftext|>"}));
    if (!real_shapes()) {
        EXPECT_EQ(scatter_points(run.html), std::make_pair(retrained.size(), static_cast<std::size_t>(rows)));
    }
    // Did fine-tuning train the added tokens? No: edit_model starts them at the mean row (a tiny one, the rows
    // being centred Gaussians) and nothing trained them, so B's scan (no unused tokens: lowest input norm) names
    // both, and neither has a pair in A.
    const std::vector<Index> b_candidates = run.json["scan"]["b"]["candidates"].get<std::vector<Index>>();
    for (const Index added : {rows, rows + 1}) {
        EXPECT_NE(std::find(b_candidates.begin(), b_candidates.end(), added), b_candidates.end()) << added;
    }
    EXPECT_EQ(run.json["scan"]["b"]["paired"].get<std::size_t>(), b_candidates.size() - 2);
}

TEST(CompareFiles, TwoModelsSharingGpt2sTokenizerPairByText) {
    const Index rows = real_shapes() ? kGpt2Rows : 320;
    const Index width = real_shapes() ? kGpt2Width : 16;
    const Index padded = (rows + 63) / 64 * 64 + 64;  // nanoGPT pads GPT-2's 50257 rows to 50304
    TempDir dir;
    const std::vector<std::string> texts = gpt2_like_texts(rows);
    // Two models trained apart place the shared tokens alike up to a rotation; the second also moved " and".
    const Table a = gaussian_table(rows, width, 41);
    Table b = gaussian_table(padded, width, 42);
    b.topRows(rows) = a * random_orthogonal(width, 43) + gaussian_table(rows, width, 44, 1e-4);
    const Index moved_id = id_of(texts, " and");
    b.row(moved_id) = gaussian_table(1, width, 45).row(0);
    write_checkpoint(dir.path() / "model-a", a, texts);
    write_checkpoint(dir.path() / "model-b", b, texts);

    const Compared run =
        compare(dir.path(), {"model-a", "model-b", "--match", "text", "--align", "orthogonal", "--probes", "100"});
    EXPECT_EQ(run.json["matched"], rows);
    EXPECT_EQ(run.json["unmatched_b"], padded - rows);  // the padding rows have no token
    EXPECT_EQ(run.json["moved"][0]["text"], " and");
    EXPECT_EQ(run.json["moved"][0]["a"], moved_id);
    EXPECT_LT(run.json["moved"][0]["row_cosine"].get<double>(), 0.99);
    EXPECT_GT(run.json["moved"][1]["row_cosine"].get<double>(), 0.99);
    // The noise (1e-4 against values of 0.12) is above float32 rounding: the other rows are close, not identical.
    expect_verdict(run, "1 of " + std::to_string(rows) + " rows moved after alignment, the others close");
}

}  // namespace

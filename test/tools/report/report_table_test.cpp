// --table through the core: a table written to a file by save_table is loaded,
// reported on, and every value checked against loops over the table that was
// written; the JSON names its source and has no seed; a file the loader refuses
// is a bad argument carrying the loader's own message.

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "fresh_dir.hpp"
#include "json_in_markdown.hpp"
#include "loop_reference.hpp"
#include "report.hpp"

namespace {

using namespace embed::report::testing_loops;
using embed::report::Command;
using embed::report::FreshDir;
using embed::report::ReportInputs;
using testing::HasSubstr;

Command parse(const std::vector<std::string>& args) {
    const std::vector<std::string_view> views(args.begin(), args.end());
    return embed::report::parse_command_line(views);
}

// The one line a refused command line (parsed, then its table loaded) gives, or a note that it was accepted.
std::string refusal(const std::vector<std::string>& args) {
    try {
        Command command = parse(args);
        embed::report::load_command_table(command);
    } catch (const std::invalid_argument& error) {
        return error.what();
    }
    return "(accepted)";
}

// What embed::load_table itself says about file, to compare the tool's message with.
std::string loader_message(const std::string& file, std::string_view tensor = {}) {
    try {
        embed::load_table(file, tensor);
    } catch (const std::exception& error) {
        return error.what();
    }
    return "(loaded)";
}

// (V, d) with no seed behind it, rows of different lengths so that dot and cosine disagree.
Table hand_made_table(Index vocab, Index dim) {
    Table t(vocab, dim);
    for (Index r = 0; r < vocab; ++r) {
        for (Index c = 0; c < dim; ++c) t(r, c) = std::sin(0.7 * static_cast<double>(r * dim + c)) * static_cast<double>(1 + r % 4);
    }
    return t;
}

std::vector<std::string> keys_in_file_order(const std::string& json_text) {
    const auto parsed = nlohmann::ordered_json::parse(json_text);  // items() refers to it: keep it alive
    std::vector<std::string> keys;
    for (const auto& item : parsed.items()) keys.push_back(item.key());
    return keys;
}

// Runs the report on the table the command names, in the precision it was loaded in, the way the tool does.
embed::report::ReportResult measure_loaded(Command& command) {
    embed::OpenedTable loaded = embed::report::load_command_table(command);
    return std::visit([&](auto& table) { return embed::report::measure(std::move(table), command.inputs); },
                      loaded.table);
}

std::string report_json(Command& command) { return embed::report::render_json(measure_loaded(command)); }

// (V, d) whose every value is exact in bfloat16 (and so in float32): k / 256 * 2^(r % 4) with |k| <= 255,
// at most 8 significant bits. Rows of different lengths, so that dot and cosine disagree.
Table bfloat16_exact_table(Index vocab, Index dim) {
    Table t(vocab, dim);
    for (Index r = 0; r < vocab; ++r) {
        for (Index c = 0; c < dim; ++c) {
            const double k = std::round(255.0 * std::sin(0.7 * static_cast<double>(r * dim + c)));
            t(r, c) = std::ldexp(k / 256.0, static_cast<int>(r % 4));
        }
    }
    return t;
}

// A one-tensor .safetensors file holding t as "F32" or "BF16", written byte by byte from the format
// (8-byte little-endian header length, JSON header, data): save_table writes only float64.
void write_narrow_safetensors(const std::string& file, const Table& t, const std::string& dtype) {
    const bool bf16 = dtype == "BF16";
    std::string data;
    for (Index i = 0; i < t.size(); ++i) {
        const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(t.data()[i]));  // exact: see above
        for (int b = bf16 ? 2 : 0; b < 4; ++b) data.push_back(static_cast<char>((bits >> (8 * b)) & 0xFFu));
    }
    const std::string header = R"({"wte":{"dtype":")" + dtype + R"(","shape":[)" + std::to_string(t.rows()) + "," +
                               std::to_string(t.cols()) + R"(],"data_offsets":[0,)" + std::to_string(data.size()) +
                               "]}}";
    std::string length;
    for (int b = 0; b < 8; ++b) length.push_back(static_cast<char>((header.size() >> (8 * b)) & 0xFFu));
    std::ofstream(file, std::ios::binary) << length << header << data;
}

TEST(ReportTable, ANpyTableIsMeasuredAsWrittenAndNamedAsTheSource) {
    FreshDir dir;
    const Table t = hand_made_table(40, 6);
    const std::string file = dir / "table.npy";
    embed::save_table(file, t);
    Command command = parse({"--table", file, "--probe=3", "--k", "4", "--pick", "1", "--growth", "3"});
    const std::string text = report_json(command);
    EXPECT_EQ(command.inputs.vocab, 40);
    EXPECT_EQ(command.inputs.dim, 6);
    std::vector<std::string> keys = REPORT_KEYS;
    keys.insert(keys.begin() + 3, "source");
    EXPECT_EQ(keys_in_file_order(text), keys) << "source follows seed";
    const json j = json::parse(text);
    EXPECT_TRUE(j.at("seed").is_null());
    EXPECT_EQ(j.at("source"), json({{"file", file}, {"tensor", ""}, {"precision", "f64"}}));
    expect_values_match_loops(j, t, command.inputs);
}

TEST(ReportTable, ASafetensorsTensorIsReadByNameOrByTheLoadersChoice) {
    FreshDir dir;
    const Table t = hand_made_table(30, 5);
    const std::string file = dir / "model.safetensors";
    embed::save_table(file, t, "model.embed_tokens.weight");
    for (const std::string& spec : {file + ":model.embed_tokens.weight", file}) {
        Command command = parse({"--table=" + spec, "--probe", "7", "--k", "3", "--pick", "2"});
        const json j = json::parse(report_json(command));
        EXPECT_EQ(j.at("source"),
                  json({{"file", file}, {"tensor", "model.embed_tokens.weight"}, {"precision", "f64"}}))
            << spec;
        expect_values_match_loops(j, t, command.inputs);
    }
}

TEST(ReportTable, TheMarkdownAndFigureSayWhereTheTableCameFrom) {
    FreshDir dir;
    const std::string file = dir / "wte.safetensors";
    embed::save_table(file, hand_made_table(20, 4), "wte");
    Command command = parse({"--table", file + ":wte", "--probe", "2"});
    const auto result = measure_loaded(command);
    const std::string md = embed::report::render_markdown(result);
    EXPECT_THAT(md, HasSubstr("파일 `" + file + "`의 텐서 `wte`에서 V × d 임베딩 표를 읽어"));
    EXPECT_THAT(md, HasSubstr("`source` = {\"file\":\"" + file + "\",\"precision\":\"f64\",\"tensor\":\"wte\"}"));
    EXPECT_THAT(md, HasSubstr("`seed` = null"));
    EXPECT_THAT(md, testing::Not(HasSubstr("random.Random")));
    EXPECT_THAT(embed::report::render_svg(result), HasSubstr("before: the table as loaded"));
}

// A float32 or bfloat16 file is analysed in its own precision, never widened: the values still match loops
// over the same numbers in double (every score is summed in double), and the report says which precision.
TEST(ReportTable, AFloat32OrBfloat16TableIsAnalysedInItsOwnPrecision) {
    FreshDir dir;
    const Table t = bfloat16_exact_table(60, 12);
    for (const auto& [dtype, precision, index] :
         {std::tuple{"F32", "f32", 1}, std::tuple{"BF16", "bf16", 2}}) {
        const std::string file = dir / (std::string(dtype) + ".safetensors");
        write_narrow_safetensors(file, t, dtype);
        Command command = parse({"--table", file, "--probe=5", "--k", "6", "--pick", "2"});
        EXPECT_EQ(embed::report::load_command_table(command).table.index(), static_cast<std::size_t>(index)) << dtype;
        const std::string text = report_json(command);
        const json j = json::parse(text);
        EXPECT_EQ(j.at("source"), json({{"file", file}, {"tensor", "wte"}, {"precision", precision}})) << dtype;
        expect_values_match_loops(j, t, command.inputs);
        EXPECT_THAT(embed::report::render_markdown(measure_loaded(command)),
                    HasSubstr(std::string("임베딩 표를 파일의 ") + precision + " 그대로 읽어"));
    }
}

// A loaded table with a value planted in it that a generated one never has, and what it must do to the
// values that every generated table gives alike (worked out by hand from SPECIFICATION.md): the JSON must still
// parse (null where a number is NaN or infinite), every value must match the loops, and the Markdown and
// figure must still show it.
struct Planted {
    std::string name;
    std::function<void(Table&)> plant;  // on hand_made_table(40, 6), whose probe is row 3
    std::function<void(const json&)> expect;
};

std::vector<Planted> planted_tables() {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    return {
        {"a NaN in the probe row",
         [](Table& t) { t(3, 2) = nan; },
         [](const json& j) {
             EXPECT_TRUE(j.at("max_abs_diff").is_null());
             EXPECT_EQ(j.at("repeat_same"), false) << "NaN is not equal to itself";
             EXPECT_EQ(j.at("logit_argmax"), 0) << "every logit is NaN, so the smallest id";
             EXPECT_EQ(j.at("cos_neighbors"), json({0, 1, 2, 4})) << "every cosine is NaN, so by id";
             EXPECT_EQ(j.at("dot_neighbors"), json({0, 1, 2, 4}));
             EXPECT_EQ(j.at("cos_unchanged_by_scale"), false);
             EXPECT_TRUE(j.at("rms_plain").is_null());
             EXPECT_TRUE(j.at("rms_ratio").is_null());
         }},
        {"a NaN in row 0",
         [](Table& t) { t(0, 0) = nan; },
         [](const json& j) {
             EXPECT_TRUE(j.at("max_abs_diff").is_null()) << "the one-hot route multiplies the NaN by 0";
             EXPECT_EQ(j.at("repeat_same"), true);
             EXPECT_NE(j.at("logit_argmax"), 0) << "row 0's NaN logit ranks below every number";
             EXPECT_EQ(j.at("cos_unchanged_by_scale"), true);
         }},
        {"an infinity in row 0",
         [](Table& t) { t(0, 5) = std::numeric_limits<double>::infinity(); },
         [](const json& j) {
             EXPECT_TRUE(j.at("max_abs_diff").is_null()) << "0 times infinity is NaN";
             EXPECT_EQ(j.at("repeat_same"), true);
             EXPECT_EQ(j.at("cos_unchanged_by_scale"), true);
         }},
        {"a probe row of zeros",
         [](Table& t) { t.row(3).setZero(); },
         [](const json& j) {
             EXPECT_EQ(j.at("max_abs_diff"), 0.0);
             EXPECT_EQ(j.at("repeat_same"), true);
             EXPECT_EQ(j.at("cos_neighbors"), json({0, 1, 2, 4})) << "every cosine is 0.0, so by id";
             EXPECT_EQ(j.at("logit_argmax"), 0) << "every logit is 0";
             EXPECT_EQ(j.at("cos_unchanged_by_scale"), false) << "the cosine of a zero row is 0.0, not 1";
             EXPECT_EQ(j.at("rms_plain"), 0.0);
             EXPECT_EQ(j.at("rms_scaled"), 0.0);
             EXPECT_TRUE(j.at("rms_ratio").is_null()) << "0 / 0";
         }},
    };
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

TEST(ReportTable, NaNInfinityAndAZeroProbeRowGiveNullsAndTheLoopsValues) {
    FreshDir dir;
    for (const Planted& planted : planted_tables()) {
        SCOPED_TRACE(planted.name);
        Table t = hand_made_table(40, 6);
        planted.plant(t);
        const std::string file = dir / "planted.npy";
        embed::save_table(file, t);
        Command command = parse({"--table", file, "--probe", "3", "--k", "4", "--pick", "1"});
        const auto result = measure_loaded(command);
        const std::string text = embed::report::render_json(result);
        json j;
        ASSERT_NO_THROW(j = json::parse(text)) << text;  // nlohmann refuses NaN and Infinity, as JSON does
        planted.expect(j);
        expect_values_match_loops(j, t, command.inputs);

        std::string md = embed::report::render_markdown(result);
        for (const auto& [key, value] : j.items()) {
            EXPECT_THAT(md, HasSubstr(embed::report::testing_markdown::shown_in_markdown(key, value))) << key;
        }
        for (auto at = md.find(file); at != std::string::npos; at = md.find(file)) md.erase(at, file.size());
        EXPECT_THAT(md, testing::Not(HasSubstr("nan"))) << "a NaN score reads NaN";
        const std::string svg = embed::report::render_svg(result);
        EXPECT_THAT(svg, testing::EndsWith("</svg>\n"));
        EXPECT_EQ(occurrences(svg, "<text"), occurrences(svg, "</text>"));
        EXPECT_EQ(occurrences(svg, "<g"), occurrences(svg, "</g>"));
        EXPECT_THAT(svg, testing::Not(HasSubstr("nan")));
        EXPECT_THAT(svg, testing::Not(HasSubstr("inf")));
    }
}

TEST(ReportTable, IdsAreCheckedAgainstTheLoadedTable) {
    FreshDir dir;
    const std::string file = dir / "t.npy";
    embed::save_table(file, hand_made_table(40, 6));
    EXPECT_EQ(refusal({"--table", file}), "--probe 137 must be in [0, V) = [0, 40)");
    EXPECT_EQ(refusal({"--table", file, "--probe", "40"}), "--probe 40 must be in [0, V) = [0, 40)");
    EXPECT_EQ(refusal({"--table", file, "--probe", "39", "--k", "40"}), "--k 40 must be in [1, V) = [1, 40)");
    EXPECT_EQ(refusal({"--table", file, "--probe", "39", "--k", "39", "--pick", "38"}), "(accepted)");
}

TEST(ReportTable, FlagsThatDescribeAGeneratedTableContradictIt) {
    FreshDir dir;
    const std::string file = dir / "t.npy";
    embed::save_table(file, hand_made_table(40, 6));
    const std::string why = " cannot be used with --table: the file gives V and d, and a loaded table has no seed";
    EXPECT_EQ(refusal({"--table", file, "--vocab", "40"}), "--vocab" + why);
    EXPECT_EQ(refusal({"--dim=6", "--table", file}), "--dim" + why);
    EXPECT_EQ(refusal({"--table", file, "--seed", "1", "--probe", "3"}), "--seed" + why);
}

TEST(ReportTable, AFileTheLoaderRefusesIsABadArgumentWithTheLoadersMessage) {
    FreshDir dir;
    const std::string garbage = dir / "garbage.npy";
    std::ofstream(garbage, std::ios::binary) << "not a numpy file at all";
    EXPECT_EQ(refusal({"--table", garbage, "--probe", "0"}),
              "--table '" + garbage + "' cannot be used: " + loader_message(garbage));

    const std::string truncated = dir / "truncated.npy";
    embed::save_table(truncated, hand_made_table(40, 6));
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 8);
    EXPECT_EQ(refusal({"--table", truncated, "--probe", "0"}),
              "--table '" + truncated + "' cannot be used: " + loader_message(truncated));

    const std::string model = dir / "model.safetensors";
    embed::save_table(model, hand_made_table(30, 5), "wte");
    EXPECT_EQ(refusal({"--table", model + ":lm_head", "--probe", "0"}),
              "--table '" + model + ":lm_head' cannot be used: " + loader_message(model, "lm_head"));

    const std::string json_file = dir / "notes.json";
    std::ofstream(json_file) << "{}";
    EXPECT_EQ(refusal({"--table", json_file, "--probe", "0"}),
              "--table '" + json_file + "' cannot be used: " + loader_message(json_file));
    for (const std::string& message : {loader_message(garbage), loader_message(truncated)}) {
        EXPECT_THAT(message, testing::Not(testing::StartsWith("(loaded)")));
    }
}

TEST(ReportTable, AMissingFileOrAnEmptyTensorNameIsRefusedBeforeLoading) {
    FreshDir dir;
    const std::string missing = dir / "missing.npy";
    EXPECT_EQ(refusal({"--table", missing}),
              "--table '" + missing +
                  "' is not an existing file or folder (allowed: a .npy, .safetensors or .gguf file or a checkpoint folder, V and d from its shape)");
    const std::string file = dir / "t.safetensors";
    embed::save_table(file, hand_made_table(10, 2), "wte");
    EXPECT_EQ(refusal({"--table", file + ":", "--probe", "0"}), "--table '" + file + ":' names an empty tensor after ':'");
}

TEST(ReportTable, ATableOfOneRowHasNoNeighboursToRank) {
    FreshDir dir;
    const std::string file = dir / "one.npy";
    embed::save_table(file, hand_made_table(1, 6));
    EXPECT_EQ(refusal({"--table", file, "--probe", "0"}),
              "--table '" + file + "' holds a (1, 6) table; the report needs V at least 2 and d at least 1");
}

// A generated table is capped at 2^25 entries; a loaded one already sits in memory, so it is not.
TEST(ReportTable, TheEntryCapHoldsForGeneratedTablesOnly) {
    ReportInputs in;
    in.vocab = Index{1} << 20;
    in.dim = 64;
    EXPECT_THROW(embed::report::validate(in), std::invalid_argument);
    in.source = embed::report::TableSource{"big.npy", "", "f64"};
    EXPECT_NO_THROW(embed::report::validate(in));
}

}  // namespace

// The built embed_report, run as a user would in a fresh directory: the
// golden files, refusals (exit 2, one line, old report untouched), write
// failures (exit 1) and the all-or-nothing promise.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <embed/embed.hpp>
#include <nlohmann/json.hpp>

#include "fresh_dir.hpp"
#include "gguf_model.hpp"
#include "tool_run.hpp"

namespace {

namespace fs = std::filesystem;
using embed::report::FreshDir;
using testing::HasSubstr;
using embed::Index;

const std::vector<std::string> kFiles = {"embed_report.html", "embed_report.json", "embed_report.md", "embed_report.svg"};  // sorted, as entries() lists them

using embed_test::read_file;
using embed_test::ToolRun;
using embed_test::write_file;

// Runs the tool in dir with the given arguments.
ToolRun run_tool(const fs::path& dir, const std::vector<std::string>& args) {
    return embed_test::run_tool(EMBED_REPORT_EXE, dir, args);
}

std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(ReportCli, DefaultRunReproducesTheGoldenFilesByteForByte) {
    FreshDir dir;
    const ToolRun run = run_tool(dir.path(), {});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const std::string& name : kFiles) {
        EXPECT_EQ(read_file(dir.path() / name), read_file(fs::path(EMBED_GOLDEN_DIR) / name))
            << name << " differs from test/tools/report/golden; if the library's arithmetic changed on purpose, say so and regenerate";
    }
    EXPECT_EQ(run.out,
              "wrote ./embed_report.json\nwrote ./embed_report.md\nwrote ./embed_report.svg\nwrote ./embed_report.html\n");
    EXPECT_EQ(run.err, "");
    EXPECT_EQ(entries(dir.path()), kFiles) << "no temporary files are left";
}

TEST(ReportCli, OutDirChoosesWhereTheFilesGo) {
    FreshDir dir;
    fs::create_directory(dir.path() / "out");
    const ToolRun run = run_tool(dir.path(), {"--out-dir", "out", "--vocab", "40", "--probe", "3"});
    ASSERT_EQ(run.status, 0) << run.err;
    for (const std::string& name : kFiles) EXPECT_TRUE(fs::is_regular_file(dir.path() / "out" / name)) << name;
    EXPECT_THAT(run.out, HasSubstr("out/embed_report.json"));
    EXPECT_THAT(read_file(dir.path() / "out" / "embed_report.json"), HasSubstr("\"vocab\": 40,"));
}

TEST(ReportCli, ASecondRunReplacesTheReportWhole) {
    FreshDir dir;
    ASSERT_EQ(run_tool(dir.path(), {"--seed", "1"}).status, 0);
    ASSERT_EQ(run_tool(dir.path(), {}).status, 0);
    for (const std::string& name : kFiles) {
        EXPECT_EQ(read_file(dir.path() / name), read_file(fs::path(EMBED_GOLDEN_DIR) / name)) << name;
    }
}

TEST(ReportCli, HelpAndVersionExitZeroAndWriteNothing) {
    FreshDir dir;
    const ToolRun help = run_tool(dir.path(), {"--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_THAT(help.out, HasSubstr("usage: embed_report"));
    for (const char* flag : {"--out-dir", "--vocab", "--dim", "--seed", "--probe", "--k", "--pick",
                             "--stretch-factor", "--growth", "--version"}) {
        EXPECT_THAT(help.out, HasSubstr(flag));
    }
    const ToolRun version = run_tool(dir.path(), {"--version"});
    EXPECT_EQ(version.status, 0);
    EXPECT_THAT(version.out, testing::StartsWith("embed_report "));
    EXPECT_TRUE(entries(dir.path()).empty());
}

struct BadInput {
    std::vector<std::string> args;
    std::string message;  // a substring of the one stderr line
};

void PrintTo(const BadInput& bad, std::ostream* os) {
    for (const auto& arg : bad.args) *os << arg << ' ';
}

class ReportCliRefuses : public testing::TestWithParam<BadInput> {};

TEST_P(ReportCliRefuses, WithExitTwoOneLineAndThePreviousReportUntouched) {
    FreshDir dir;
    for (const std::string& name : kFiles) write_file(dir.path() / name, "previous " + name);
    const ToolRun run = run_tool(dir.path(), GetParam().args);
    EXPECT_EQ(run.status, 2);
    EXPECT_THAT(run.err, testing::StartsWith("embed_report: "));
    EXPECT_THAT(run.err, HasSubstr(GetParam().message));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.out, "");
    for (const std::string& name : kFiles) EXPECT_EQ(read_file(dir.path() / name), "previous " + name);
    EXPECT_EQ(entries(dir.path()), kFiles) << "no temporary files are left";
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, ReportCliRefuses,
    testing::Values(BadInput{{"--probe", "512"}, "--probe 512 must be in [0, V) = [0, 512)"},
                    BadInput{{"--probe=-1"}, "--probe -1 must be in [0, V) = [0, 512)"},
                    BadInput{{"--vocab", "100"}, "--probe 137 must be in [0, V) = [0, 100)"},
                    BadInput{{"--k", "0"}, "--k 0 must be in [1, V) = [1, 512)"},
                    BadInput{{"--vocab=40", "--probe", "3", "--k", "40"}, "--k 40 must be in [1, V) = [1, 40)"},
                    BadInput{{"--pick", "5"}, "--pick 5 must be in [0, K) = [0, 5)"},
                    BadInput{{"--k", "3"}, "--pick 4 must be in [0, K) = [0, 3)"},
                    BadInput{{"--vocab", "-3"}, "--vocab -3 must be at least 2"},
                    BadInput{{"--dim", "0"}, "--dim 0 must be at least 1"},
                    BadInput{{"--growth=0"}, "--growth 0 must be at least 1"},
                    BadInput{{"--vocab", "100000", "--dim", "100000"},
                             "--vocab 100000 times --dim 100000 is more than the 2^25 = 33554432 entries"},
                    BadInput{{"--growth", "9223372036854775807"}, "past 2^63 - 1"},
                    BadInput{{"--stretch-factor", "inf"}, "--stretch-factor 'inf' is not a finite decimal number"},
                    BadInput{{"--stretch-factor=1e999"}, "--stretch-factor 1e999 is past the largest double"},
                    BadInput{{"--seed", "-1"}, "--seed -1 must be in [0, 2^64), decimal"},
                    BadInput{{"--seed", "0x10"}, "--seed '0x10' is not a decimal integer"},
                    BadInput{{"--frobnicate"}, "unknown argument '--frobnicate'"},
                    BadInput{{"--vocab", "40", "stray"}, "unknown argument 'stray'"},
                    BadInput{{"--probe"}, "--probe is missing its value"},
                    BadInput{{"--out-dir"}, "--out-dir is missing its value"},
                    BadInput{{"--out-dir", "does/not/exist"}, "--out-dir 'does/not/exist' does not exist"},
                    BadInput{{"--out-dir=embed_report.json"}, "--out-dir 'embed_report.json' is not a directory"},
                    BadInput{{"--k", "3", "--k=4"}, "--k is given more than once"},
                    BadInput{{"--table", "missing.npy"}, "--table 'missing.npy' is not an existing file or folder"},
                    BadInput{{"--table=embed_report.json", "--probe", "0"},
                             "--table 'embed_report.json' cannot be used: "},
                    BadInput{{"--table", "embed_report.json", "--seed", "3"},
                             "--seed cannot be used with --table"}));

TEST(ReportCli, BothSpellingsOnOneLineRunAndWriteTheRequestedReport) {
    FreshDir dir;
    fs::create_directory(dir.path() / "out");
    const ToolRun run = run_tool(dir.path(), {"--out-dir=out", "--vocab", "40", "--probe=+3", "--stretch-factor=1e-400"});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string json = read_file(dir.path() / "out" / "embed_report.json");
    EXPECT_THAT(json, HasSubstr("\"vocab\": 40,"));
    EXPECT_THAT(json, HasSubstr("\"probe\": 3,"));
    EXPECT_THAT(json, HasSubstr("\"stretch_factor\": 0.0,"));
}

TEST(ReportCli, ATableFileIsReportedWithItsSourceAndNoSeed) {
    FreshDir dir;
    embed::Table table(30, 4);
    for (embed::Index i = 0; i < table.size(); ++i) table.data()[i] = static_cast<double>((i * 7) % 11) - 5.0;
    embed::save_table(dir / "t.npy", table);
    const ToolRun run = run_tool(dir.path(), {"--table=t.npy", "--probe", "3", "--k", "4", "--pick=1"});
    ASSERT_EQ(run.status, 0) << run.err;
    const std::string json = read_file(dir.path() / "embed_report.json");
    EXPECT_THAT(json, HasSubstr("\"seed\": null,\n  \"source\": {\n    \"file\": \"t.npy\",\n    \"tensor\": \"\",\n    \"precision\": \"f64\"\n  },"));
    EXPECT_THAT(json, HasSubstr("\"vocab\": 30,"));
    EXPECT_THAT(read_file(dir.path() / "embed_report.md"), HasSubstr("파일 `t.npy`에서"));
}

// A hostile file is a bad argument like any other: exit 2, the loader's reason, the previous report kept.
TEST(ReportCli, AHostileTableFileExitsTwoWithTheLoadersReasonAndWritesNothing) {
    FreshDir dir;
    for (const std::string& name : kFiles) write_file(dir.path() / name, "previous " + name);
    // A valid npy header that promises 10^9 x 10^9 float64 values, with none behind it.
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }";
    header.append(128 - 10 - header.size() - 1, ' ').push_back('\n');  // the data starts 128 bytes in
    std::string bytes = "\x93NUMPY\x01\x00";
    bytes.push_back(static_cast<char>(header.size()));
    bytes.push_back('\0');
    write_file(dir.path() / "huge.npy", bytes + header);
    const ToolRun run = run_tool(dir.path(), {"--table", "huge.npy", "--probe", "0"});
    EXPECT_EQ(run.status, 2);
    EXPECT_THAT(run.err, testing::StartsWith("embed_report: --table 'huge.npy' cannot be used: huge.npy: "));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    for (const std::string& name : kFiles) EXPECT_EQ(read_file(dir.path() / name), "previous " + name);
}

TEST(ReportCli, HelpAfterABadFlagStillPrintsHelpAndWritesNothing) {
    FreshDir dir;
    const ToolRun run = run_tool(dir.path(), {"--vocab", "abc", "--frobnicate", "--help"});
    EXPECT_EQ(run.status, 0);
    EXPECT_THAT(run.out, testing::StartsWith("usage: embed_report"));
    EXPECT_EQ(run.err, "");
    EXPECT_TRUE(entries(dir.path()).empty());
}

// When one file cannot be put in place, the others must not be either. A directory
// squatting on one file's name (each in turn) makes keeping a link to it fail, after all
// temporaries are complete but before any rename: the writer gives up with nothing
// replaced. (Permission bits do not stop root, so this is the portable way to fail.) The
// rollback of renames already done is reached in test/tools/common/rollback_test.cpp.
TEST(ReportCli, WhenOneFileCannotBeReplacedThePreviousReportStaysWhole) {
    for (const std::string& squatted : kFiles) {
        FreshDir dir;
        for (const std::string& name : kFiles) {
            if (name != squatted) write_file(dir.path() / name, "previous " + name);
        }
        fs::create_directory(dir.path() / squatted);
        write_file(dir.path() / squatted / "keep", "x");
        const ToolRun run = run_tool(dir.path(), {});
        EXPECT_EQ(run.status, 1) << squatted;
        EXPECT_THAT(run.err, HasSubstr(squatted));
        for (const std::string& name : kFiles) {
            if (name != squatted) {
                EXPECT_EQ(read_file(dir.path() / name), "previous " + name) << squatted;
            }
        }
        EXPECT_EQ(entries(dir.path()), kFiles) << squatted << ": no temporary files are left";
    }
}

// The same failure with no previous report: the other new files must not appear without it.
TEST(ReportCli, WhenOneFileCannotBeWrittenNoneAppear) {
    for (const std::string& squatted : kFiles) {
        FreshDir dir;
        fs::create_directory(dir.path() / squatted);
        write_file(dir.path() / squatted / "keep", "x");
        const ToolRun run = run_tool(dir.path(), {});
        EXPECT_EQ(run.status, 1) << squatted;
        EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{squatted}));
    }
}


// prefix followed by id ("t17"), built by appending: GCC 12 warns wrongly (-Wrestrict) about "t" + to_string.
std::string numbered(const char* prefix, Index id) {
    std::string text = prefix;
    text += std::to_string(id);
    return text;
}

// A tokenizer.json of a byte-level BPE model whose tokens the test names by hand: id 5 is "Ġking" (read
// " king"), 6 is "Ċ" (a newline), 7 holds a '|' and 9 and 10 are the same string. Every other id i below
// `count` is "t<i>", read as stored.
std::string byte_level_tokenizer(int count) {
    nlohmann::json vocab = nlohmann::json::object();
    for (int i = 0; i < count; ++i) vocab[numbered("t", i)] = i;
    vocab.erase("t5");
    vocab.erase("t6");
    vocab.erase("t7");
    vocab["\u0120king"] = 5;
    vocab["\u010a"] = 6;
    vocab["a|b"] = 7;
    nlohmann::json tokenizer = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
                                {"decoder", {{"type", "ByteLevel"}}},
                                {"added_tokens", nlohmann::json::array()}};
    // 9 and 10 share one string: a map cannot hold both, so 10 comes back as an added token.
    vocab.erase("t9");
    vocab["dup"] = 9;
    tokenizer["model"]["vocab"] = vocab;
    tokenizer["added_tokens"].push_back({{"id", 10}, {"content", "dup"}, {"special", false}});
    tokenizer["model"]["vocab"].erase("t10");
    return tokenizer.dump();
}

// What the hand-made tokenizer's id reads as; ids past its end have no token.
std::string expected_text(Index id, int count) {
    if (id >= count) return numbered("<no token ", id) + ">";
    switch (id) {
        case 5: return " king";
        case 6: return "\n";
        case 7: return "a|b";
        case 9:
        case 10: return "dup";
        default: return numbered("t", id);
    }
}

// Every id the report's JSON lists, as the tokens key must name them.
std::set<Index> ids_in_report(const nlohmann::json& report) {
    std::set<Index> ids = {report["probe"].get<Index>(), report["logit_argmax"].get<Index>(),
                           report["stretch_target"].get<Index>()};
    for (const char* key : {"cos_neighbors", "dot_neighbors", "cos_after_stretch", "dot_after_stretch"}) {
        for (const auto& id : report[key]) ids.insert(id.get<Index>());
    }
    return ids;
}

void save_generated_table(const fs::path& file, Index vocab) {
    embed::save_table(file, embed::make_table(vocab, 8, 11));
}

TEST(ReportCli, ProbeTokenNamesTheProbeAndTokensNamesEveryIdShown) {
    FreshDir dir;
    save_generated_table(dir.path() / "t.npy", 40);
    write_file(dir.path() / "tok.json", byte_level_tokenizer(30));  // 30 names for 40 rows: 30-39 are padding
    const ToolRun run = run_tool(dir.path(), {"--table", "t.npy", "--tokenizer", "tok.json", "--probe-token", " king",
                                              "--k", "20", "--pick", "3"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json report = nlohmann::json::parse(read_file(dir.path() / "embed_report.json"));
    EXPECT_EQ(report["probe"], 5);
    const std::set<Index> shown = ids_in_report(report);
    ASSERT_TRUE(report.contains("tokens"));
    std::set<Index> named;
    for (const auto& [key, text] : report["tokens"].items()) {
        const Index id = std::stoll(key);
        named.insert(id);
        EXPECT_EQ(text.get<std::string>(), expected_text(id, 30)) << "id " << id;
    }
    EXPECT_EQ(named, shown) << "tokens names exactly the ids the report shows";
    EXPECT_TRUE(std::any_of(shown.begin(), shown.end(), [](Index id) { return id >= 30; }))
        << "the run should show a padded row, or the test checks nothing about them";
    const std::string markdown = read_file(dir.path() / "embed_report.md");
    EXPECT_THAT(markdown, HasSubstr("`probe` = 5 (\" king\")"));
    const Index target = report["stretch_target"].get<Index>();
    EXPECT_THAT(markdown, HasSubstr("`stretch_target` = " + std::to_string(target) + " (\"" +
                                    expected_text(target, 30) + "\")"));
    // The figure labels the stretched row with its text, as a JSON string (a newline shows as \n), with
    // the characters XML reserves escaped.
    std::string label;
    for (const char c : nlohmann::json(expected_text(target, 30)).dump()) {
        label += c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;") : c == '&' ? std::string("&amp;")
                                                                                            : std::string(1, c);
    }
    EXPECT_THAT(read_file(dir.path() / "embed_report.svg"), HasSubstr("token " + std::to_string(target) + " " + label));
}

TEST(ReportCli, ATokenizerBesideTheTableNamesItsRowsWithoutAFlag) {
    FreshDir dir;
    save_generated_table(dir.path() / "t.npy", 40);
    write_file(dir.path() / "tokenizer.json", byte_level_tokenizer(40));
    const ToolRun run = run_tool(dir.path(), {"--table", "t.npy", "--probe", "6"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json report = nlohmann::json::parse(read_file(dir.path() / "embed_report.json"));
    EXPECT_EQ(report["tokens"]["6"], "\n");
    EXPECT_EQ(report["tokens"].size(), ids_in_report(report).size());
}

TEST(ReportCli, ATableWithoutTokenNamesHasNoTokensKey) {
    FreshDir dir;
    save_generated_table(dir.path() / "t.npy", 40);
    const ToolRun run = run_tool(dir.path(), {"--table", "t.npy", "--probe", "6"});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_FALSE(nlohmann::json::parse(read_file(dir.path() / "embed_report.json")).contains("tokens"));
}

// A probe token that names no row, or several, or needs names nobody gave: exit 2, one line, nothing written.
TEST(ReportCli, AProbeTokenThatIsNotExactlyOneRowExitsTwoNamingTheCandidates) {
    FreshDir dir;
    save_generated_table(dir.path() / "t.npy", 40);
    write_file(dir.path() / "tok.json", byte_level_tokenizer(40));
    const auto refused = [&](const std::vector<std::string>& args, const std::string& message) {
        const ToolRun run = run_tool(dir.path(), args);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_EQ(run.err, "embed_report: " + message + "\n");
        EXPECT_FALSE(fs::exists(dir.path() / "embed_report.json"));
    };
    refused({"--table", "t.npy", "--tokenizer", "tok.json", "--probe-token", "dup"},
            "--probe-token \"dup\" matches 2 tokens: 9 (token \"dup\"), 10 (token \"dup\"); pick one with --probe");
    refused({"--table", "t.npy", "--tokenizer", "tok.json", "--probe-token", "king"},
            "--probe-token \"king\" matches no token (neither as stored nor as read) of the vocabulary's 40 ids");
    refused({"--table", "t.npy", "--probe-token", "t3"},
            "--probe-token needs token names: give --tokenizer (a .gguf, a tokenizer.json or a checkpoint folder), "
            "or a table that has its own");
    refused({"--table", "t.npy", "--tokenizer", "missing.json", "--probe", "3"},
            "--tokenizer 'missing.json' cannot be used: filesystem error: cannot open: No such file or directory "
            "[missing.json]");
    save_generated_table(dir.path() / "small.npy", 8);
    refused({"--table", "small.npy", "--tokenizer", "tok.json", "--probe-token", "t20"},
            "--probe-token \"t20\" is token 20, outside the table's rows [0, 8)");
}

// 40 rows, 30 tokens: the rows past the vocabulary have no token and are shown as "<no token N>"; the probe
// may still be named by its text.
TEST(ReportCli, AGgufVocabularyShorterThanItsTableNamesThePaddedRowsAsNoToken) {
    FreshDir dir;
    write_file(dir.path() / "m.gguf", embed_test::gguf_model(40, 8, 30, {}));
    ToolRun run = run_tool(dir.path(), {"--table", "m.gguf", "--probe-token", "tok5", "--k", "39", "--pick", "0"});
    ASSERT_EQ(run.status, 0) << run.err;
    nlohmann::json report = nlohmann::json::parse(read_file(dir.path() / "embed_report.json"));
    EXPECT_EQ(report["probe"], 5);
    EXPECT_EQ(report["source"]["precision"], "f32");
    for (Index id = 0; id < 40; ++id) {
        if (id == 5) continue;
        const std::string want = id < 30 ? embed_test::gguf_model_token(id) : numbered("<no token ", id) + ">";
        EXPECT_EQ(report["tokens"][std::to_string(id)], want) << "every row is a neighbour with k = 39";
    }
    run = run_tool(dir.path(), {"--table", "m.gguf", "--probe", "35"});
    ASSERT_EQ(run.status, 0) << run.err;
    report = nlohmann::json::parse(read_file(dir.path() / "embed_report.json"));
    EXPECT_EQ(report["tokens"]["35"], "<no token 35>");
}

// 30 rows, 40 tokens: the tokens past the table have no row; naming the probe by one of them is refused.
TEST(ReportCli, AGgufVocabularyLongerThanItsTableUsesOnlyTheTokensWithARow) {
    FreshDir dir;
    write_file(dir.path() / "m.gguf", embed_test::gguf_model(30, 8, 40, {}));
    for (const std::string& name : kFiles) write_file(dir.path() / name, "previous " + name);
    ToolRun run = run_tool(dir.path(), {"--table", "m.gguf", "--probe-token", "tok35"});
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(run.err, "embed_report: --probe-token \"tok35\" is token 35, outside the table's rows [0, 30)\n");
    for (const std::string& name : kFiles) EXPECT_EQ(read_file(dir.path() / name), "previous " + name);
    run = run_tool(dir.path(), {"--table", "m.gguf", "--probe-token", "tok29", "--k", "29", "--pick", "0"});
    ASSERT_EQ(run.status, 0) << run.err;
    const nlohmann::json report = nlohmann::json::parse(read_file(dir.path() / "embed_report.json"));
    EXPECT_EQ(report["probe"], 29);
    EXPECT_EQ(report["vocab"], 30);
    for (const auto& [key, text] : report["tokens"].items()) {
        EXPECT_LT(std::stoll(key), 30) << key;
        EXPECT_EQ(text, embed_test::gguf_model_token(std::stoll(key)));
    }
}

}  // namespace

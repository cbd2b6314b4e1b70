// embed_report.md: the five sections of SPECIFICATION.md, Report sections, each a few sentences around
// the numbers of the same run. Every value that is also a JSON key is shown
// as "`key` = value" with the JSON's own text, so a reader (and a test) can
// match the two files.

#include <algorithm>
#include <cmath>
#include <sstream>

#include "format.hpp"
#include "report.hpp"
#include "tokens.hpp"

namespace embed::report {
namespace {

template <typename T>
std::string keyed(const char* key, const T& value) {
    return std::string("`") + key + "` = " + json_text(value);
}

std::string keyed(const char* key, const std::vector<Index>& ids) { return std::string("`") + key + "` = " + id_list(ids); }

std::string keyed_ids(const char* key, const std::vector<Neighbour>& ranked) {
    return keyed(key, ids_of(ranked));
}

// A token's text inside a table cell, after its id: '|' would end the cell.
std::string cell_text(const ReportResult& r, Index id) {
    const std::optional<std::string> text = quoted_text(r, id);
    if (!text) return "";
    std::string escaped = " ";
    for (const char c : *text) {
        if (c == '|') escaped += '\\';
        escaped += c;
    }
    return escaped;
}

std::string ranked_cell(const ReportResult& r, const std::vector<Neighbour>& ranked, std::size_t i, Index marked) {
    const Neighbour& n = ranked[i];
    const std::string id = n.id == marked ? "**" + std::to_string(n.id) + "**" : std::to_string(n.id);
    return id + cell_text(r, n.id) + " (" + fixed(n.score, 6) + ")";
}

// " (\" king\")" after an id the run has a name for; nothing without token names.
std::string read_as(const ReportResult& r, Index id) {
    const std::optional<std::string> text = quoted_text(r, id);
    return text ? " (" + *text + ")" : "";
}

// Bytes with a binary unit beside them: "131072 B (128.0 KiB)".
std::string bytes_text(Index bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double scaled = static_cast<double>(bytes);
    int unit = 0;
    while (scaled >= 1024.0 && unit < 6) {
        scaled /= 1024.0;
        ++unit;
    }
    std::string text = std::to_string(bytes) + " B";
    if (unit > 0) text += " (" + fixed(scaled, 1) + " " + units[unit] + ")";
    return text;
}

std::string position_text(Index position, Index k) {
    return position < 0 ? "top-" + std::to_string(k) + " 밖" : std::to_string(position) + "위";
}

// Where the table came from: generated like CPython's random, or read from a file.
void describe_table(std::ostringstream& md, const ReportInputs& in) {
    if (!in.source) {
        md << "CPython `random.Random(seed)`와 비트 단위로 같은 난수로 V × d 임베딩 표를 만들고 (각 칸은 `random()` - "
              "0.5, 0번 토큰 0번 열부터 행 순서로 채움), ";
        return;
    }
    md << "파일 `" << in.source->file << "`";
    if (!in.source->tensor.empty()) md << "의 텐서 `" << in.source->tensor << "`";
    if (in.source->precision == "f64") {
        md << "에서 V × d 임베딩 표를 읽어 (각 값은 double로 정확히 바꿈), ";
    } else {
        md << "에서 V × d 임베딩 표를 파일의 " << in.source->precision
           << " 그대로 읽어 (넓히지 않고, 점수만 double로 합함), ";
    }
}

void section_measured(std::ostringstream& md, const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    md << "## 무엇을 쟀나\n\n";
    describe_table(md, in);
    md << "프로브 토큰 하나를 기준으로 조회, 가중치 묶기, 내적과 코사인, √d 배율을 쟀다. 아래 숫자는 모두 이 실행에서 "
          "라이브러리를 돌려 얻은 값이고, `embed_report.json`의 같은 이름 값과 같다.\n\n"
       << "- 표 모양: " << keyed("table_shape", std::vector<Index>{r.table_shape.rows, r.table_shape.cols})
       << " (어휘 " << keyed("vocab", in.vocab) << ", 너비 " << keyed("dim", in.dim) << "), 파라미터 "
       << keyed("params", r.params) << "\n";
    if (in.source) {
        md << "- 표 출처: " << keyed("source", source_json(*in.source)) << "\n"
           << "- 시드: 없음, 파일에서 읽은 표다 (" << keyed("seed", nullptr) << ")\n";
    } else {
        md << "- 시드: " << keyed("seed", in.seed) << "\n";
    }
    md << "- 프로브 토큰: " << keyed("probe", in.probe) << read_as(r, in.probe) << "\n"
       << "- 이웃 수 k = " << in.k << ", 늘릴 코사인 이웃의 위치 pick = " << in.pick << " (0부터), 늘리는 배수 "
       << keyed("stretch_factor", in.stretch_factor) << ", 어휘를 키우는 배수 growth = " << in.growth << "\n\n";
}

void section_lookup(std::ostringstream& md, const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    md << "## 조회와 원-핫 곱은 같은 연산이다\n\n"
       << "조회는 표에서 프로브의 행을 꺼내 복사할 뿐이라 곱셈이 " << keyed("lookup_mults", r.lookup_mults)
       << " 번이다. 같은 행을 원-핫 벡터 (길이 " << in.vocab << ") 곱하기 표 (" << in.vocab << " × " << in.dim
       << ")로 구하면 토큰 하나에 " << in.vocab << " × " << in.dim << " = " << keyed("one_hot_mults", r.one_hot_mults)
       << " 번을 곱한다. 1.0이 아닌 자리는 모두 0을 곱해 더하므로 그 행만 남고, 두 결과의 차이 중 가장 큰 절댓값은 "
       << keyed("max_abs_diff", r.max_abs_diff)
       << (r.max_abs_diff == 0.0 ? " 이다: 값이 정확히 같다.\n\n" : " 이다: 값이 정확히 같지 않다.\n\n")
       << "같은 ID를 두 번 조회하면 두 벡터가 " << (r.repeat_same ? "완전히 같다" : "같지 않다") << " ("
       << keyed("repeat_same", r.repeat_same)
       << "). 임베딩에는 문맥이 없다는 뜻이다; 문맥은 뒤의 어텐션이 보탠다.\n\n";
}

void section_tying(std::ostringstream& md, const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    const VocabGrowth& g = r.growth;
    md << "## 가중치를 묶으면 무엇이 줄어드나\n\n"
       << "입력에서 쓴 표를 출력 쪽에서 그대로 다시 쓰면 (가중치 묶기) 은닉 벡터 하나가 어휘 전체의 점수가 된다. "
          "프로브의 행을 은닉 벡터로 넣으니 로짓은 "
       << keyed("logit_len", r.logit_len) << " 개이고, 가장 큰 로짓은 " << keyed("logit_argmax", r.logit_argmax)
       << read_as(r, r.logit_argmax) << " 번 토큰이다 (" << keyed("logit_argmax_is_self", r.logit_argmax_is_self) << "). "
       << (r.logit_argmax_is_self ? "자기 자신과의 내적은 길이의 제곱이라 프로브 자신이 가장 높다.\n\n"
                                  : "프로브보다 길이가 긴 행이 있어 자기 자신보다 큰 내적을 낸다.\n\n")
       << "표가 하나면 V × d, 따로 두면 같은 모양이 두 개다. 어휘를 " << in.growth
       << " 배로 키우면 너비는 그대로인데 세 수가 모두 " << in.growth << " 배가 된다:\n\n"
       << "| 파라미터 | 어휘 " << in.vocab << " | 어휘 " << keyed("bigger_vocab", g.bigger_vocab) << " |\n"
       << "| --- | ---: | ---: |\n"
       << "| 묶음 (표 1개) | " << keyed("tied_params", g.tied) << " | " << keyed("bigger_tied", g.bigger_tied) << " |\n"
       << "| 따로 (표 2개) | " << keyed("untied_params", g.untied) << " | " << keyed("bigger_untied", g.bigger_untied)
       << " |\n"
       << "| 줄어든 수 | " << keyed("saved", g.saved) << " | " << r.bigger_saved << " |\n\n"
       << "파라미터 수에 값 하나의 바이트를 곱하면 메모리다. 어휘를 키우자는 제안이 메모리 회의로 끝나는 까닭이 "
          "여기 있다:\n\n"
       << "| 형식 | 묶음, 어휘 " << g.vocab << " | 따로, 어휘 " << g.vocab << " | 묶음, 어휘 " << g.bigger_vocab
       << " | 따로, 어휘 " << g.bigger_vocab << " |\n"
       << "| --- | ---: | ---: | ---: | ---: |\n";
    for (const MemoryRow& row : r.memory) {
        md << "| " << element_type_name(row.type) << " (" << block_bytes(row.type) << " B) | " << bytes_text(row.tied)
           << " | " << bytes_text(row.untied) << " | " << bytes_text(row.bigger_tied) << " | "
           << bytes_text(row.bigger_untied) << " |\n";
    }
    const MemoryRow& fp32 = r.memory.front();
    md << "\n" << element_type_name(fp32.type) << "로 묶으면 어휘 " << g.bigger_vocab << " 에서 " << bytes_text(fp32.bigger_saved)
       << " 를 아낀다 (어휘 " << g.vocab << " 에서는 " << bytes_text(fp32.saved) << ").\n\n";
}

void section_dot_cosine(std::ostringstream& md, const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    const Index target = r.stretch_target;
    const bool cos_same = ids_of(r.cos_neighbors) == ids_of(r.cos_after_stretch);
    const Index dot_from = position_of(r.dot_neighbors, target);
    const Index dot_to = position_of(r.dot_after_stretch, target);
    const TokenPoint& moved = *std::find_if(r.points.begin(), r.points.end(),
                                            [target](const TokenPoint& t) { return t.id == target; });
    md << "## 내적과 코사인이 갈리는 자리\n\n"
       << "코사인은 내적을 두 길이의 곱으로 나눈 값이라 방향만 보고, 내적은 길이에도 비례한다. 프로브의 이웃 "
       << in.k << " 개를 두 점수로 각각 뽑았다: " << keyed_ids("cos_neighbors", r.cos_neighbors) << ", "
       << keyed_ids("dot_neighbors", r.dot_neighbors) << " (" << keyed("neighbors_differ", r.neighbors_differ)
       << "). 그다음 코사인 이웃의 " << in.pick << " 번 자리 (0부터) 토큰 " << keyed("stretch_target", target)
       << read_as(r, target) << " 의 행 하나만 " << keyed("stretch_factor", in.stretch_factor) << " 배로 늘렸다: "
       << keyed_ids("cos_after_stretch", r.cos_after_stretch) << ", "
       << keyed_ids("dot_after_stretch", r.dot_after_stretch) << ".\n\n"
       << "| 순위 | 코사인, 전 | 내적, 전 | 코사인, 후 | 내적, 후 |\n"
       << "| ---: | --- | --- | --- | --- |\n";
    for (std::size_t i = 0; i < r.cos_neighbors.size(); ++i) {
        md << "| " << i << " | " << ranked_cell(r, r.cos_neighbors, i, target) << " | "
           << ranked_cell(r, r.dot_neighbors, i, target) << " | " << ranked_cell(r, r.cos_after_stretch, i, target)
           << " | " << ranked_cell(r, r.dot_after_stretch, i, target) << " |\n";
    }
    md << "\n늘린 뒤 코사인 목록은 " << (cos_same ? "그대로다" : "바뀌었다") << " (토큰 " << target << ": "
       << position_text(position_of(r.cos_neighbors, target), in.k) << " → "
       << position_text(position_of(r.cos_after_stretch, target), in.k) << "). 내적 목록에서 토큰 " << target
       << " 의 자리는 " << position_text(dot_from, in.k) << " → " << position_text(dot_to, in.k) << " 이다. "
       << (dot_from != dot_to ? "길이만 바꿨는데 내적 순위가 움직인다.\n\n" : "이번에는 내적 순위도 그대로다.\n\n")
       << "![프로브 " << in.probe << " 에 대한 모든 토큰의 코사인 (가로)과 내적 (세로), 늘리기 전과 후]("
       << SVG_FILE << ")\n\n"
       << "그림의 점 하나가 프로브를 뺀 토큰 하나다. 가로는 코사인, 세로는 내적이고, 점선은 각 점수의 top-" << in.k
       << " 경계다. 늘린 토큰의 코사인은 " << fixed(moved.cosine_before, 6) << " → " << fixed(moved.cosine_after, 6)
       << ", 내적은 " << fixed(moved.dot_before, 6) << " → " << fixed(moved.dot_after, 6) << " 이다: "
       << (std::fabs(moved.cosine_after - moved.cosine_before) <= 1e-12 ? "점은 세로로만 움직인다.\n\n"
                                                                         : "점은 가로로도 움직인다.\n\n");
}

void section_sqrt_d(std::ostringstream& md, const ReportResult& r) {
    const ReportInputs& in = r.inputs;
    const StoredScale& s = r.sqrt_d;
    const auto stored = [&](const char* name, double value) {
        const double relative = std::fabs(value - s.exact) / s.exact;
        char error[32];
        std::snprintf(error, sizeof error, "%.3g", relative);
        return std::string(name) + " 으로 저장하면 " + json_text(value) +
               (value == s.exact ? " (정확히 표현된다)" : " (상대 오차 " + std::string(error) + ")");
    };
    md << "## √d 를 곱하면 무엇이 달라지나\n\n"
       << "모든 칸에 같은 수 √d = √" << in.dim << " = " << json_text(s.exact)
       << " 를 곱하므로 방향은 그대로고 크기만 바뀐다. 프로브 행의 rms는 " << keyed("rms_plain", r.rms_plain)
       << ", 곱한 뒤 " << keyed("rms_scaled", r.rms_scaled) << ", 비율 " << keyed("rms_ratio", r.rms_ratio)
       << " 이다. d 를 곱했다면 비율은 " << in.dim << " 이었을 것이다.\n\n"
       << "방향: 원래 행과 곱한 행의 코사인은 " << json_text(r.cos_plain_scaled)
       << ", 첫 코사인 이웃과의 코사인은 곱하기 전 " << json_text(r.cos_first_neighbour) << ", 둘 다 곱한 뒤 "
       << json_text(r.cos_first_neighbour_scaled) << " 이다 (1e-12 안에서 같은가: "
       << keyed("cos_unchanged_by_scale", r.cos_unchanged_by_scale) << ").\n\n"
       << "배율 자체도 저장 형식을 탄다: √d 를 " << stored("bf16", s.bf16) << ", " << stored("fp16", s.fp16)
       << ".\n";
}

}  // namespace

std::string render_markdown(const ReportResult& r) {
    std::ostringstream md;
    md << "# 임베딩 표에서 로짓까지: 측정 보고서\n\n";
    section_measured(md, r);
    section_lookup(md, r);
    section_tying(md, r);
    section_dot_cosine(md, r);
    section_sqrt_d(md, r);
    return md.str();
}

}  // namespace embed::report

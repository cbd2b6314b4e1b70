#include <string>
#include <unordered_map>

#include "compare/measures.hpp"

namespace embed {
namespace {

struct TextCount {
    Index id = 0;
    Index count = 0;
};

// Each text of the ids that have both a token and a row: how many rows hold it, and the (last) one that does.
std::unordered_map<std::string, TextCount> texts_of(const Vocabulary& vocabulary, Index rows) {
    std::unordered_map<std::string, TextCount> texts;
    const Index ids = std::min(vocabulary.size(), rows);
    for (Index id = 0; id < ids; ++id) {
        if (vocabulary.missing(id)) continue;
        TextCount& entry = texts[vocabulary.text(id)];
        entry.id = id;
        ++entry.count;
    }
    return texts;
}

}  // namespace

std::vector<RowPair> pairs_by_text(const Vocabulary& a, Index a_rows, const Vocabulary& b, Index b_rows) {
    const std::unordered_map<std::string, TextCount> a_texts = texts_of(a, a_rows);
    const std::unordered_map<std::string, TextCount> b_texts = texts_of(b, b_rows);
    std::vector<RowPair> pairs;
    for (const auto& [text, in_a] : a_texts) {
        if (in_a.count != 1) continue;
        const auto in_b = b_texts.find(text);
        if (in_b != b_texts.end() && in_b->second.count == 1) pairs.push_back({in_a.id, in_b->second.id});
    }
    std::sort(pairs.begin(), pairs.end(), [](const RowPair& x, const RowPair& y) { return x.a < y.a; });
    return pairs;
}

}  // namespace embed

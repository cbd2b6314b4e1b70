#include "id_list.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace embed::tools {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw std::invalid_argument(message); }

std::string named(const ArgumentText& flag, std::string_view list) {
    return std::string(flag.name) + " '" + std::string(list) + "'";
}

std::string allowed_note(const ArgumentText& flag) { return " (allowed: " + std::string(flag.allowed) + ")"; }

// One id of a list: a whole-string decimal, not negative, without a sign.
Index parse_id(const ArgumentText& flag, std::string_view list, std::string_view text) {
    const Decimal<Index> read = read_decimal<Index>(text);
    if (!read.value || *read.value < 0 || text.front() == '+') {
        refuse(named(flag, list) + " has '" + std::string(text) + "', which is not an id" + allowed_note(flag));
    }
    return *read.value;
}

}  // namespace

std::vector<IdRange> parse_id_list(const ArgumentText& flag, std::string_view list) {
    if (list.empty()) refuse(named(flag, list) + " is empty" + allowed_note(flag));
    std::vector<IdRange> ranges;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string_view item = list.substr(start, comma - start);
        if (item.empty()) refuse(named(flag, list) + " has an empty item" + allowed_note(flag));
        const std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            const Index id = parse_id(flag, list, item);
            ranges.push_back({id, id});
        } else {
            const IdRange range{parse_id(flag, list, item.substr(0, dash)), parse_id(flag, list, item.substr(dash + 1))};
            if (range.first > range.last) {
                refuse(named(flag, list) + " has the range '" + std::string(item) + "', which runs backwards" +
                       allowed_note(flag));
            }
            ranges.push_back(range);
        }
        start = comma + 1;
    }
    return ranges;
}

std::vector<Index> expand_id_list(std::string_view flag, const std::vector<IdRange>& ranges, Index rows) {
    for (const IdRange& range : ranges) {
        if (range.last >= rows) {
            refuse(std::string(flag) + " has id " + std::to_string(range.last) + ", outside the table's rows [0, " +
                   std::to_string(rows) + ")");
        }
    }
    std::set<Index> ids;
    for (const IdRange& range : ranges) {
        for (Index id = range.first; id <= range.last; ++id) ids.insert(id);
    }
    return {ids.begin(), ids.end()};
}

}  // namespace embed::tools

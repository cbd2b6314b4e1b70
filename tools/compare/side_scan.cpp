#include "side_scan.hpp"

#include <utility>
#include <variant>

#include "table_source.hpp"

namespace embed::compare_tool {

SideScan scan_side(const OpenedTable& table, const std::optional<Vocabulary>& vocabulary) {
    return std::visit(
        [&](const auto& t) {
            ScanOptions options;
            options.percentile = kScanPercentile;
            if (vocabulary) options.reference_ids = tools::default_reference_ids(*vocabulary, t.rows());
            // The one table as both arguments: the library sees one object, a tied model, as embed_scan passes it.
            VocabularyScan scan = scan_vocabulary(t, t, options);
            SideScan side;
            side.reference_count = static_cast<Index>(options.reference_ids.size());
            side.reference_from = options.reference_ids.empty() ? "none" : "unused tokens";
            side.main_indicator = scan.main_indicator;
            side.threshold = scan.threshold;
            side.candidates = std::move(scan.candidates);
            return side;
        },
        table.table);
}

}  // namespace embed::compare_tool

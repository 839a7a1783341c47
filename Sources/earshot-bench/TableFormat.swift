import Foundation

/// Plain-text table cells for the benchmark reports.
enum TableFormat {
    /// Pads each cell: positive widths right-align, negative ones left-align.
    static func row(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).map { cell, width in
            let padding = String(repeating: " ", count: max(0, abs(width) - cell.count))
            return width < 0 ? cell + padding : padding + cell
        }.joined()
    }

    /// `value` with `digits` decimals, or "-" when it is not finite.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "-"
    }
}

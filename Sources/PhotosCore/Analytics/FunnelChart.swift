import Foundation
import PhotosModel

/// Draws a `FunnelReport`: as text for the terminal (bars of block characters scaled to its
/// width, or plain `#` when not a terminal) and as an SVG chart a browser shows.
public enum FunnelChart {
    /// Human names of the funnel's steps, in order.
    public static let labels = ["sessions", "viewed a photo", "started a buy", "asked to sign in", "purchased"]

    /// The report as text lines: the total funnel with bars and conversions, each day's counts,
    /// then the buy flows' exits by reason. `width` is the terminal's, or nil for plain output.
    public static func text(_ report: FunnelReport, width: Int?) -> String {
        var lines = ["purchase funnel \(report.from) … \(report.until) (distinct sessions per day, summed)"]
        let steps = report.total.steps
        let largest = max(steps.max() ?? 0, 1)
        let labelWidth = labels.map(\.count).max() ?? 0
        let numberWidth = max(String(largest).count, 5)
        // Label, count, conversion, then the bar in what is left of the line.
        let barWidth = max(10, (width ?? 60) - labelWidth - numberWidth - 16)
        let conversions = report.conversions
        for (index, count) in steps.enumerated() {
            let length = Int((Double(count) / Double(largest) * Double(barWidth)).rounded())
            let bar = width == nil ? String(repeating: "#", count: length) : blocks(Double(count) / Double(largest) * Double(barWidth))
            let conversion = index == 0 ? "" : conversions[index - 1].map { String(format: "%5.1f%%", $0) } ?? "    -"
            lines.append(
                labels[index].padding(toLength: labelWidth, withPad: " ", startingAt: 0) + "  "
                    + String(repeating: " ", count: numberWidth - String(count).count) + String(count) + "  "
                    + conversion.padding(toLength: 6, withPad: " ", startingAt: 0) + "  " + bar)
        }
        lines.append("")
        let header = ["DAY", "SESSIONS", "VIEWED", "BUY", "SIGN-IN", "PURCHASED"]
        let rows = report.days.map { [$0.day] + $0.steps.map(String.init) }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            lines.append(row.enumerated().map { column, cell in
                column == 0 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  "))
        }
        lines.append("")
        lines.append("buy flows ended, by reason:")
        let exits = report.exitsByReason
        if exits.isEmpty { lines.append("  (none)") }
        for exit in exits { lines.append("  \(exit.reason): \(exit.flows)") }
        return lines.joined(separator: "\n")
    }

    /// A bar of `cells` cells in Unicode block characters (eighths for the last cell).
    static func blocks(_ cells: Double) -> String {
        let eighths = Int((cells * 8).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partial[eighths % 8]
    }

    /// The total funnel as an SVG document: a title, one labelled bar per step with its count and
    /// the conversion from the step before, and the exits by reason.
    public static func svg(_ report: FunnelReport) -> String {
        let steps = report.total.steps
        let largest = max(steps.max() ?? 0, 1)
        let exits = report.exitsByReason
        let barLeft = 190.0, barMax = 420.0, rowHeight = 44.0, top = 70.0
        let height = top + rowHeight * Double(steps.count) + 50 + 22 * Double(max(exits.count, 1)) + 20
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="760" height="\(Int(height))" viewBox="0 0 760 \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <title>Purchase funnel \(escape(report.from)) to \(escape(report.until))</title>
            <rect width="760" height="\(Int(height))" fill="#ffffff"/>
            <text x="20" y="36" font-size="22" font-weight="bold" fill="#222">Purchase funnel</text>
            <text x="20" y="58" font-size="13" fill="#555">\(escape(report.from)) to \(escape(report.until)) · distinct sessions per day, summed</text>

            """
        let conversions = report.conversions
        for (index, count) in steps.enumerated() {
            let y = top + rowHeight * Double(index)
            let width = max(1, Double(count) / Double(largest) * barMax)
            let shade = ["#1f4e79", "#2e75b6", "#4a90d9", "#7fb2e5", "#2f9e44"][index]
            svg += "<text x=\"\(Int(barLeft - 10))\" y=\"\(Int(y + 24))\" font-size=\"14\" text-anchor=\"end\" fill=\"#222\">\(labels[index])</text>\n"
            svg += "<rect x=\"\(Int(barLeft))\" y=\"\(Int(y + 8))\" width=\"\(String(format: "%.1f", width))\" height=\"26\" rx=\"3\" fill=\"\(shade)\"/>\n"
            var note = "\(count)"
            if index > 0, let conversion = conversions[index - 1] { note += String(format: " (%.1f%%)", conversion) }
            svg += "<text x=\"\(Int(barLeft + width + 8))\" y=\"\(Int(y + 26))\" font-size=\"14\" fill=\"#222\">\(note)</text>\n"
        }
        var y = top + rowHeight * Double(steps.count) + 30
        svg += "<text x=\"20\" y=\"\(Int(y))\" font-size=\"15\" font-weight=\"bold\" fill=\"#222\">Buy flows ended, by reason</text>\n"
        if exits.isEmpty {
            y += 22
            svg += "<text x=\"30\" y=\"\(Int(y))\" font-size=\"13\" fill=\"#555\">(none)</text>\n"
        }
        for exit in exits {
            y += 22
            svg += "<text x=\"30\" y=\"\(Int(y))\" font-size=\"13\" fill=\"#333\">\(escape(exit.reason)): \(exit.flows)</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// `text` for SVG/XML: `&`, `<`, `>` and `"` escaped (the experiment chart's too).
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

import Foundation

/// Draws an `ExperimentReport`: a table for the terminal and an SVG chart with the variants'
/// funnels side by side.
public enum ExperimentChart {
    /// Human names of the experiment funnel's steps, in order.
    public static let labels = ["exposed", "reached buy", "asked to sign in", "signed in", "purchased"]

    static func percent(_ fraction: Double?) -> String {
        fraction.map { String(format: "%.1f%%", $0 * 100) } ?? "-"
    }

    static func points(_ fraction: Double) -> String {
        String(format: "%+.1f", fraction * 100)
    }

    /// A variant's difference to the control in words: `+5.3 points [-2.1, +12.8], p = 0.210`
    /// (percentage points of conversion, the 95 % interval, the test's p) — the console's and
    /// the chart's wording.
    public static func describe(_ difference: ExperimentReport.Difference) -> String {
        "\(points(difference.estimate)) points [\(points(difference.lower)), \(points(difference.upper))], p = \(String(format: "%.3f", difference.pValue))"
    }

    /// The report as text: one row per variant, then how the interval was computed.
    public static func text(_ report: ExperimentReport) -> String {
        var lines = [
            "experiment \(report.experiment) on \(report.point) (\(report.running ? "running" : "stopped"); control \(report.control))",
            "sessions counted in the variant of their first exposure; steps after it",
            "",
        ]
        let header = ["VARIANT", "EXPOSED", "REACHED BUY", "ASKED SIGN-IN", "SIGNED IN", "PURCHASED", "CONVERSION", "VS CONTROL (95% CI)", "P"]
        let rows = report.variants.enumerated().map { index, variant in
            var row = [variant.variant] + variant.steps.map(String.init) + [percent(variant.conversion)]
            if index == 0 {
                row += ["(control)", ""]
            } else if let difference = variant.difference {
                row += ["\(points(difference.estimate)) pts [\(points(difference.lower)), \(points(difference.upper))]", String(format: "%.3f", difference.pValue)]
            } else {
                row += ["-", ""]
            }
            return row
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        for row in [header] + rows {
            lines.append(row.enumerated().map { column, cell in
                column == 0 || column >= 7 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        lines.append("")
        lines.append("interval: \(report.method)")
        return lines.joined(separator: "\n")
    }

    /// The variants' funnels side by side as an SVG document: for each step one bar per variant,
    /// with its count and its share of the variant's exposed sessions; the difference to the
    /// control under the chart.
    public static func svg(_ report: ExperimentReport) -> String {
        let largest = max(report.variants.map(\.exposed).max() ?? 0, 1)
        let shades = ["#1f4e79", "#e07b00", "#2f9e44", "#8e44ad", "#c0392b"]
        let barLeft = 190.0, barMax = 440.0, barHeight = 18.0, top = 86.0
        let rowHeight = barHeight * Double(max(report.variants.count, 1)) + 16
        let height = top + rowHeight * Double(labels.count) + 30 + 22 * Double(report.variants.count) + 20
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="800" height="\(Int(height))" viewBox="0 0 800 \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <title>Experiment \(escape(report.experiment))</title>
            <rect width="800" height="\(Int(height))" fill="#ffffff"/>
            <text x="20" y="36" font-size="22" font-weight="bold" fill="#222">Experiment \(escape(report.experiment))</text>
            <text x="20" y="58" font-size="13" fill="#555">\(escape(report.point)) · control \(escape(report.control)) · \(report.running ? "running" : "stopped") · sessions by their first exposure</text>

            """
        for (index, variant) in report.variants.enumerated() {
            let x = 20 + 150 * index
            svg += "<rect x=\"\(x)\" y=\"66\" width=\"12\" height=\"12\" fill=\"\(shades[index % shades.count])\"/>"
            svg += "<text x=\"\(x + 18)\" y=\"77\" font-size=\"13\" fill=\"#222\">\(escape(variant.variant))\(index == 0 ? " (control)" : "")</text>\n"
        }
        for (step, label) in labels.enumerated() {
            let y = top + rowHeight * Double(step)
            svg += "<text x=\"\(Int(barLeft - 10))\" y=\"\(Int(y + barHeight))\" font-size=\"14\" text-anchor=\"end\" fill=\"#222\">\(label)</text>\n"
            for (index, variant) in report.variants.enumerated() {
                let count = variant.steps[step]
                let width = max(1, Double(count) / Double(largest) * barMax)
                let barY = y + 4 + barHeight * Double(index)
                svg += "<rect x=\"\(Int(barLeft))\" y=\"\(String(format: "%.1f", barY))\" width=\"\(String(format: "%.1f", width))\" height=\"\(Int(barHeight - 3))\" fill=\"\(shades[index % shades.count])\"/>"
                let share = variant.exposed == 0 ? "" : String(format: " (%.1f%%)", Double(count) * 100 / Double(variant.exposed))
                svg += "<text x=\"\(Int(barLeft + width + 6))\" y=\"\(String(format: "%.1f", barY + barHeight - 6))\" font-size=\"12\" fill=\"#222\">\(count)\(step == 0 ? "" : share)</text>\n"
            }
        }
        var y = top + rowHeight * Double(labels.count) + 20
        for variant in report.variants.dropFirst() {
            y += 22
            let text = variant.difference.map { "\(variant.variant) − \(report.control), conversion (95 % interval): \(describe($0))" }
                ?? "\(variant.variant): no difference (no exposure yet)"
            svg += "<text x=\"20\" y=\"\(Int(y))\" font-size=\"13\" fill=\"#333\">\(escape(text))</text>\n"
        }
        return svg + "</svg>\n"
    }

    private static func escape(_ text: String) -> String { FunnelChart.escape(text) }
}

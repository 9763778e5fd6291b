import Foundation

/// `swiftycache-bench --charts REPORT.json [--scale SCALE.json] --chart-dir DIR`: SVG charts
/// drawn from the benchmark's own JSON, with no dependency. Every figure is a ratio against a
/// baseline of the same run, or a rate of the run named in the chart's caption.
enum Charts {
    /// Writes every chart the reports hold rows for; returns the files written.
    static func write(report reportPath: String, scale scalePath: String?, to directory: String) throws -> [String] {
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(filePath: reportPath)))
        let output = URL(filePath: directory, directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        var written: [String] = []
        func save(_ name: String, _ svg: String?) throws {
            guard let svg else { return }
            let file = output.appending(path: name)
            try Data(svg.utf8).write(to: file)
            written.append(file.path(percentEncoded: false))
        }
        try save("against-sqlite.svg", againstSQLite(report))
        try save("latency.svg", latency(report))
        if let scalePath {
            let scale = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(filePath: scalePath)))
            try save("scale.svg", scaleChart(scale))
        }
        return written
    }

    /// The rows drawn against SQLite: (label, row name), each the throughput of the library
    /// over SQLite's in the same run (the inverse of the row's cost ratio).
    static let sqliteRows: [(String, String)] = [
        ("ObjectCache set, a ~320 B note (JSON + SQLite)", "ObjectCache packed vs sqlite set note"),
        ("ObjectCache get, a ~320 B note (JSON + SQLite)", "ObjectCache packed vs sqlite get note"),
        ("packed set, 2 × 128 B", "packed vs sqlite set 2 × 128 B"),
        ("packed get, 2 × 128 B", "packed vs sqlite get 2 × 128 B"),
        ("packed remove, 2 × 128 B", "packed vs sqlite remove 2 × 128 B"),
        ("packed churn, 2 × 128 B", "packed vs sqlite churn 2 × 128 B"),
        ("packed set, 2 × 1 KiB", "packed vs sqlite set 2 × 1 KiB"),
        ("packed get, 2 × 1 KiB", "packed vs sqlite get 2 × 1 KiB"),
        ("files set, 2 × 128 B", "files vs sqlite set 2 × 128 B"),
        ("files get, 2 × 128 B", "files vs sqlite get 2 × 128 B"),
    ]

    static func row(_ name: String, in report: Report) -> Report.Row? {
        report.rows.first { $0.workload.name == name }
    }

    /// Throughput against SQLite, per operation, on a log scale (1× is SQLite's throughput).
    static func againstSQLite(_ report: Report) -> String? {
        let bars: [(String, Double)] = sqliteRows.compactMap { label, name in
            guard let ratio = row(name, in: report)?.costRatio, ratio > 0 else { return nil }
            return (label, 1 / ratio)
        }
        guard !bars.isEmpty else { return nil }
        return BarChart(
            title: "Throughput against SQLite in the same run (SQLite = 1×, log scale)",
            caption: "\(report.machine); \(report.date); swiftycache-bench \(report.options)",
            bars: bars, logScale: true, unit: "×", baseline: true
        ).svg
    }

    /// The rows whose latency percentiles are drawn; a name ending in `/baseline` draws the
    /// row's baseline (SQLite, in the same run).
    static let latencyRows: [(String, String)] = [
        ("ObjectCache get, a note", "ObjectCache packed vs sqlite get note"),
        ("JSON + SQLite get, a note", "ObjectCache packed vs sqlite get note/baseline"),
        ("ObjectCache set, a note", "ObjectCache packed vs sqlite set note"),
        ("JSON + SQLite set, a note", "ObjectCache packed vs sqlite set note/baseline"),
        ("packed get, 2 × 128 B", "packed vs sqlite get 2 × 128 B"),
        ("packed set, 2 × 128 B", "packed vs sqlite set 2 × 128 B"),
        ("files get, 1 KiB", "engine get 1 KiB"),
        ("files set, 1 KiB", "engine set 1 KiB"),
    ]

    /// p50 and p99 latency per operation, in microseconds, on a log scale.
    static func latency(_ report: Report) -> String? {
        var bars: [(String, Double)] = []
        for (label, name) in latencyRows {
            let isBaseline = name.hasSuffix("/baseline")
            let rowName = isBaseline ? String(name.dropLast("/baseline".count)) : name
            let found = row(rowName, in: report)
            guard let figure = isBaseline ? found?.baseline : found?.workload, let p50 = figure.p50Microseconds,
                let p99 = figure.p99Microseconds
            else { continue }
            bars.append(("\(label), p50", p50))
            bars.append(("\(label), p99", p99))
        }
        guard !bars.isEmpty else { return nil }
        return BarChart(
            title: "Latency per operation, µs (log scale)",
            caption: "\(report.machine); \(report.date); swiftycache-bench \(report.options)",
            bars: bars, logScale: true, unit: " µs"
        ).svg
    }

    /// Memory per entry and the rates of sets and gets at each size of the scale workload.
    static func scaleChart(_ report: Report) -> String? {
        var sizes: [Int] = []
        for name in report.derived.keys {
            guard name.hasPrefix("scale "), let colon = name.firstIndex(of: ":"),
                let size = Int(name[name.index(name.startIndex, offsetBy: 6)..<colon])
            else { continue }
            if !sizes.contains(size) { sizes.append(size) }
        }
        sizes.sort()
        guard !sizes.isEmpty else { return nil }
        func series(_ field: String) -> [Double?] { sizes.map { report.derived["scale \($0): \(field)"] } }
        return LineChart(
            title:
                "One packed cache from \(LineChart.count(sizes[0])) to \(LineChart.count(sizes[sizes.count - 1])) entries",
            caption: "\(report.machine); \(report.date); swiftycache-bench \(report.options)",
            sizes: sizes,
            left: (
                "sets/s and gets/s (thousands)",
                [
                    ("sets/s", series("sets per second").map { $0.map { $0 / 1000 } }),
                    ("random gets/s", series("random gets per second").map { $0.map { $0 / 1000 } }),
                    (
                        "floor: random record reads/s",
                        series("floor: random segment reads per second").map { $0.map { $0 / 1000 } }
                    ),
                ]
            ),
            right: ("resident bytes per entry", ("bytes per entry", series("resident bytes per entry")))
        ).svg
    }
}

/// Escapes text for SVG.
func svgText(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
}

/// A horizontal bar chart, one bar per label.
struct BarChart {
    var title: String
    var caption: String
    var bars: [(String, Double)]
    var logScale: Bool
    var unit: String
    /// Whether the values are ratios to a baseline of 1 (drawn from it), or plain quantities.
    var baseline = false

    var svg: String {
        let labelWidth = 330.0
        let plotWidth = 420.0
        let barHeight = 18.0
        let top = 44.0
        let width = labelWidth + plotWidth + 90
        let height = top + Double(bars.count) * (barHeight + 6) + 44
        let values = bars.map { max($0.1, 1e-9) }
        let low = logScale ? pow(10, floor(log10(min(values.min() ?? 1, 1)))) : 0
        let high = logScale ? pow(10, ceil(log10(max(values.max() ?? 1, 1)))) : (values.max() ?? 1) * 1.1
        func x(_ value: Double) -> Double {
            let fraction =
                logScale ? (log10(max(value, low)) - log10(low)) / max(log10(high) - log10(low), 1e-9) : value / high
            return labelWidth + fraction * plotWidth
        }
        var out = SVG(width: width, height: height)
        out.text(title, x: 10, y: 22, size: 15, weight: "bold")
        var tick = low
        while logScale && tick <= high * 1.0001 {
            out.line(x1: x(tick), y1: top - 6, x2: x(tick), y2: height - 38, color: "#ddd")
            out.text(LineChart.short(tick) + unit, x: x(tick), y: height - 24, size: 10, anchor: "middle")
            tick *= 10
        }
        if baseline && low < 1 && high > 1 {
            out.line(x1: x(1), y1: top - 6, x2: x(1), y2: height - 38, color: "#555")
        }
        for (index, (label, value)) in bars.enumerated() {
            let y = top + Double(index) * (barHeight + 6)
            out.text(label, x: labelWidth - 8, y: y + 13, size: 12, anchor: "end")
            // Against a baseline (a ratio), bars start at 1×: left of it is slower.
            let origin = logScale && baseline ? x(1) : labelWidth
            let color = value >= 1 || !baseline ? "#2f7ed8" : "#d9534f"
            let (start, end) = (min(origin, x(value)), max(origin, x(value)))
            out.rect(x: start, y: y, width: max(1, end - start), height: barHeight, color: color)
            out.text(LineChart.short(value) + unit, x: max(x(value), origin) + 4, y: y + 13, size: 11)
        }
        out.text(caption, x: 10, y: height - 6, size: 9, color: "#666")
        return out.finish()
    }
}

/// Lines over sizes on a log axis: series against the left axis, one against the right.
struct LineChart {
    var title: String
    var caption: String
    var sizes: [Int]
    var left: (String, [(String, [Double?])])
    var right: (String, (String, [Double?]))

    static let colors = ["#2f7ed8", "#8bbc21", "#910000", "#7b3294"]

    static func count(_ value: Int) -> String {
        value >= 1_000_000 ? "\(value / 1_000_000)M" : value >= 1000 ? "\(value / 1000)k" : "\(value)"
    }

    static func short(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    var svg: String {
        let (left0, top, plotWidth, plotHeight) = (70.0, 44.0, 560.0, 260.0)
        let width = left0 + plotWidth + 90
        let height = top + plotHeight + 90
        let logLow = log10(Double(sizes[0]))
        let logHigh = max(log10(Double(sizes[sizes.count - 1])), logLow + 1)
        func x(_ size: Int) -> Double { left0 + (log10(Double(size)) - logLow) / (logHigh - logLow) * plotWidth }
        let leftMax = (left.1.flatMap { $0.1.compactMap { $0 } }.max() ?? 1) * 1.1
        let rightMax = (right.1.1.compactMap { $0 }.max() ?? 1) * 1.1
        func yLeft(_ value: Double) -> Double { top + plotHeight - value / leftMax * plotHeight }
        func yRight(_ value: Double) -> Double { top + plotHeight - value / rightMax * plotHeight }
        var out = SVG(width: width, height: height)
        out.text(title, x: 10, y: 22, size: 15, weight: "bold")
        out.line(x1: left0, y1: top + plotHeight, x2: left0 + plotWidth, y2: top + plotHeight, color: "#555")
        for size in sizes {
            out.line(x1: x(size), y1: top, x2: x(size), y2: top + plotHeight, color: "#eee")
            out.text(Self.count(size), x: x(size), y: top + plotHeight + 16, size: 11, anchor: "middle")
        }
        for step in 0...4 {
            let value = leftMax * Double(step) / 4
            out.text(Self.short(value), x: left0 - 6, y: yLeft(value) + 4, size: 10, anchor: "end")
            let other = rightMax * Double(step) / 4
            out.text(Self.short(other), x: left0 + plotWidth + 6, y: yRight(other) + 4, size: 10, color: Self.colors[3])
        }
        out.text(left.0, x: 10, y: top - 8, size: 11)
        out.text(right.0, x: left0 + plotWidth, y: top - 8, size: 11, anchor: "end", color: Self.colors[3])
        var legend = 0
        func draw(_ name: String, _ values: [Double?], color: String, y: (Double) -> Double, dashed: Bool) {
            let points = zip(sizes, values).compactMap { size, value in value.map { (x(size), y($0)) } }
            out.polyline(points, color: color, dashed: dashed)
            for point in points { out.circle(x: point.0, y: point.1, color: color) }
            let legendY = top + plotHeight + 36 + Double(legend / 2) * 16
            let legendX = left0 + Double(legend % 2) * 280
            out.line(x1: legendX, y1: legendY - 4, x2: legendX + 20, y2: legendY - 4, color: color)
            out.text(name, x: legendX + 26, y: legendY, size: 11)
            legend += 1
        }
        for (index, (name, values)) in left.1.enumerated() {
            draw(name, values, color: Self.colors[index % 3], y: yLeft, dashed: false)
        }
        draw(right.1.0 + " (right axis)", right.1.1, color: Self.colors[3], y: yRight, dashed: true)
        out.text(caption, x: 10, y: height - 6, size: 9, color: "#666")
        return out.finish()
    }
}

/// The few SVG elements the charts draw.
struct SVG {
    private var body: [String] = []
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    mutating func text(
        _ text: String, x: Double, y: Double, size: Double, anchor: String = "start", weight: String = "normal",
        color: String = "#222"
    ) {
        body.append(
            "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(f(size))\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"\(color)\">\(svgText(text))</text>"
        )
    }

    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, color: String) {
        body.append(
            "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(color)\" stroke-width=\"1\"/>"
        )
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, color: String) {
        body.append(
            "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(height))\" fill=\"\(color)\"/>")
    }

    mutating func circle(x: Double, y: Double, color: String) {
        body.append("<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"3\" fill=\"\(color)\"/>")
    }

    mutating func polyline(_ points: [(Double, Double)], color: String, dashed: Bool) {
        let list = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
        body.append(
            "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dashed ? " stroke-dasharray=\"6 4\"" : "")/>"
        )
    }

    func finish() -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" font-family="Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="white"/>
        \(body.joined(separator: "\n"))
        </svg>

        """
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

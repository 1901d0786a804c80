/// A latency histogram with fixed buckets, in seconds, as Prometheus expects: cheap enough to
/// observe on every request (a few comparisons, no allocation).
public struct Histogram: Sendable {
    /// Upper bounds, seconds: 50 µs to 10 s, roughly ×2.5 apart.
    public static let bounds: [Double] = [
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// Observations per bucket (not cumulative); the last counts those above every bound.
    public private(set) var buckets = [UInt64](repeating: 0, count: Histogram.bounds.count + 1)
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    public init() {}

    public mutating func observe(seconds: Double) {
        var index = 0
        while index < Self.bounds.count, seconds > Self.bounds[index] { index += 1 }
        buckets[index] += 1
        sum += seconds
        count += 1
    }

    public mutating func observe(nanoseconds: UInt64) {
        observe(seconds: Double(nanoseconds) / 1e9)
    }
}

extension PrometheusText {
    /// One histogram family: `_bucket` lines with cumulative counts and `le`, then `_sum` and
    /// `_count`, per label set.
    public mutating func histogram(_ name: String, _ help: String, _ series: [([String: String], Histogram)]) {
        append("# HELP \(name) \(help)\n# TYPE \(name) histogram\n")
        for (labels, histogram) in series {
            var cumulative: UInt64 = 0
            for (index, bound) in Histogram.bounds.enumerated() {
                cumulative += histogram.buckets[index]
                append(Self.sample("\(name)_bucket", labels.merging(["le": Self.number(bound)]) { a, _ in a }, "\(cumulative)"))
            }
            append(Self.sample("\(name)_bucket", labels.merging(["le": "+Inf"]) { a, _ in a }, "\(histogram.count)"))
            append(Self.sample("\(name)_sum", labels, Self.number(histogram.sum)))
            append(Self.sample("\(name)_count", labels, "\(histogram.count)"))
        }
    }

    /// A gauge or counter whose value is not an integer (seconds, bytes from a float).
    public mutating func gauge(_ name: String, _ help: String, real value: Double, type: String = "gauge") {
        append("# HELP \(name) \(help)\n# TYPE \(name) \(type)\n")
        append(Self.sample(name, [:], Self.number(value)))
    }

    static func sample(_ name: String, _ labels: [String: String], _ value: String) -> String {
        let rendered = labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escape($0.value))\"" }
        return name + (rendered.isEmpty ? "" : "{\(rendered.joined(separator: ","))}") + " \(value)\n"
    }

    /// Prometheus floats: plain decimal or exponent, as Swift prints a Double.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

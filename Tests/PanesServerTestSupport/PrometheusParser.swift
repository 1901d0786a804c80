/// A strict reader of the Prometheus text exposition format (version 0.0.4), enough to check
/// what `/metrics` serves: every sample belongs to a declared family, names and labels are
/// well formed, values are numbers, and histograms are cumulative and end at `+Inf == _count`.
package struct PrometheusParser {
    package struct Sample: Equatable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    package enum Failure: Error, CustomStringConvertible {
        case line(Int, String)
        package var description: String { if case .line(let n, let why) = self { "line \(n): \(why)" } else { "" } }
    }

    package private(set) var types: [String: String] = [:]
    package private(set) var samples: [Sample] = []

    package init(_ text: String) throws {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            if line.isEmpty { continue }
            if line.hasPrefix("# HELP ") { continue }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2, ["counter", "gauge", "histogram", "summary", "untyped"].contains(String(parts[1])),
                      Self.isName(parts[0])
                else { throw Failure.line(number, "bad TYPE: \(line)") }
                guard types[String(parts[0])] == nil else { throw Failure.line(number, "family declared twice") }
                types[String(parts[0])] = String(parts[1])
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(line, number))
            let name = samples.last!.name
            guard family(of: name) != nil else { throw Failure.line(number, "sample \(name) has no TYPE") }
        }
        try checkHistograms()
    }

    package func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return nil
    }

    package func values(_ name: String, _ labels: [String: String] = [:]) -> [Double] {
        samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
            .map(\.value)
    }

    private static func isName<S: StringProtocol>(_ name: S) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    private static func sample(_ line: Substring, _ number: Int) throws -> Sample {
        var rest = line[...]
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isName(name) else { throw Failure.line(number, "bad name \(name)") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw Failure.line(number, "label without =") }
                let key = String(rest[..<equals])
                guard isName(key) else { throw Failure.line(number, "bad label name \(key)") }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw Failure.line(number, "label value not quoted") }
                rest = rest.dropFirst()
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first else { throw Failure.line(number, "dangling escape") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "n": value.append("\n")
                        case "\\", "\"": value.append(escaped)
                        default: throw Failure.line(number, "bad escape \\\(escaped)")
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { throw Failure.line(number, "unterminated label value") }
                rest = rest.dropFirst()
                labels[key] = value
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw Failure.line(number, "no space before the value") }
        let valueText = rest.dropFirst()
        let value: Double? = switch valueText {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(valueText)
        }
        guard let value else { throw Failure.line(number, "value `\(valueText)` is not a number") }
        return Sample(name: name, labels: labels, value: value)
    }

    private func checkHistograms() throws {
        for (family, type) in types where type == "histogram" {
            var series: [[String: String]: [(le: Double, count: Double)]] = [:]
            for sample in samples where sample.name == family + "_bucket" {
                guard let le = sample.labels["le"], let bound = le == "+Inf" ? .infinity : Double(le) else {
                    throw Failure.line(0, "\(family) bucket without le")
                }
                series[sample.labels.filter { $0.key != "le" }, default: []].append((bound, sample.value))
            }
            for (labels, buckets) in series {
                guard buckets.map(\.le) == buckets.map(\.le).sorted(), buckets.last?.le == .infinity else {
                    throw Failure.line(0, "\(family)\(labels) buckets are not in order ending at +Inf")
                }
                guard zip(buckets, buckets.dropFirst()).allSatisfy({ $0.count <= $1.count }) else {
                    throw Failure.line(0, "\(family)\(labels) buckets are not cumulative")
                }
                let count = samples.first { $0.name == family + "_count" && $0.labels == labels }?.value
                guard count == buckets.last?.count else { throw Failure.line(0, "\(family)\(labels): +Inf != _count") }
                guard samples.contains(where: { $0.name == family + "_sum" && $0.labels == labels }) else {
                    throw Failure.line(0, "\(family)\(labels) has no _sum")
                }
            }
        }
    }
}

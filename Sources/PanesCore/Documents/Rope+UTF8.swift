/// Byte-level work on leaf chunks: finding where a scalar starts, cutting and joining chunks
/// at scalar boundaries. Chunks are native Swift strings, so their UTF-8 is contiguous and
/// reading it copies nothing.
extension String {
    /// Calls `body` with the string's UTF-8, without copying it when it is native.
    func withUTF8Buffer<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return copy.withUTF8(body)
    }

    /// A string of the given UTF-8 byte ranges of up to three strings, in order, allocated
    /// once. Every range starts and ends on a scalar boundary.
    static func joining(_ first: String, _ firstBytes: Range<Int>, _ second: String, _ secondBytes: Range<Int>,
                        _ third: String = "", _ thirdBytes: Range<Int> = 0..<0) -> String {
        var result = String()
        result.reserveCapacity(firstBytes.count + secondBytes.count + thirdBytes.count)
        result.append(first, bytes: firstBytes)
        result.append(second, bytes: secondBytes)
        result.append(third, bytes: thirdBytes)
        return result
    }

    /// Appends the bytes `range` of `part`, which start and end on scalar boundaries.
    ///
    /// Appends a slice of the scalar view: its bytes are copied as they are, where making a
    /// string from raw bytes would validate them all again (most of an edit's cost). The scalar
    /// view, not the string: a string slice would round to whole characters.
    mutating func append(_ part: String, bytes range: Range<Int>) {
        guard !range.isEmpty else { return }
        let lower = part.utf8.index(part.utf8.startIndex, offsetBy: range.lowerBound)
        let upper = part.utf8.index(lower, offsetBy: range.count)
        append(contentsOf: Substring(part.unicodeScalars[lower..<upper]))
    }

    /// The bytes `range` of this string, as a string of their own.
    func utf8Slice(_ range: Range<Int>) -> String {
        if range == 0..<utf8.count { return self }
        var slice = String()
        slice.reserveCapacity(range.count)
        slice.append(self, bytes: range)
        return slice
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The byte offset where scalar number `offset` starts; `count` for the end.
    /// - Parameter summary: the buffer's counts; a buffer of single-byte scalars needs no scan.
    func byteOffset(ofScalar offset: Int, summary: RopeSummary) -> Int {
        if summary.scalars == summary.utf8 { return offset }
        if offset == summary.scalars { return count }
        // Skip whole words while the scalars starting in them stay before the one wanted.
        var seen = 0
        var index = 0
        if let base = baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let starts = 8 - RopeSummary.continuationMask(word).nonzeroBitCount
                guard seen + starts <= offset else { break }
                seen += starts
                index += 8
            }
        }
        while index < count {
            if self[index] & 0xC0 != 0x80 {
                if seen == offset { return index }
                seen += 1
            }
            index += 1
        }
        return count
    }

    /// The scalar boundary nearest to `target` at or before it (a scalar is at most four
    /// bytes, so this looks back at most three).
    func scalarBoundary(atOrBefore target: Int) -> Int {
        var index = target
        while index > 0, index < count, self[index] & 0xC0 == 0x80 { index -= 1 }
        return index
    }
}

extension UnsafeRawBufferPointer {
    /// Whether two buffers of the same length hold the same bytes; eight at a time.
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard let left = baseAddress, let right = other.baseAddress else { return true }
        var index = 0
        while index + 8 <= count {
            guard left.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                == right.loadUnaligned(fromByteOffset: index, as: UInt64.self) else { return false }
            index += 8
        }
        while index < count {
            guard self[index] == other[index] else { return false }
            index += 1
        }
        return true
    }
}

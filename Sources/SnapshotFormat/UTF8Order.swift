extension String {
    /// Whether this string's UTF-8 bytes sort before `other`'s: byte order, the order the format
    /// uses for device IDs and file names (not Unicode's order, which `<` follows).
    ///
    /// The same answer as `utf8.lexicographicallyPrecedes(other.utf8)`, compared over the two
    /// strings' contiguous bytes instead of through the generic sequence path: sorting the 1,024
    /// names of a folder of parts took 8 % of the instructions of a `syncctl merge` with nothing
    /// to do, and a tenth of that this way.
    public func precedesInUTF8Order(_ other: String) -> Bool {
        var left = self
        var right = other
        return left.withUTF8 { l in
            right.withUTF8 { r in
                let common = Swift.min(l.count, r.count)
                var i = 0
                while i < common {
                    if l[i] != r[i] { return l[i] < r[i] }
                    i += 1
                }
                return l.count < r.count
            }
        }
    }
}

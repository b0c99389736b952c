extension String {
    /// Whether this string's UTF-8 bytes sort before `other`'s: byte order, the order the format
    /// uses for device IDs and file names (not Unicode's order, which `<` follows).
    ///
    /// The same answer as `utf8.lexicographicallyPrecedes(other.utf8)`, compared over the two
    /// strings' contiguous bytes instead of through the generic sequence path, and read in place
    /// (`withContiguousStorageIfAvailable`, which neither copies nor retains the strings as
    /// `withUTF8` on copies did): sorting the 1,024 names of a folder of parts took 8 % of the
    /// instructions of a `syncctl merge` with nothing to do through the generic path, then
    /// 1.07 ms with `withUTF8`, and 0.25 ms this way (a release-built loop of 200 sorts).
    public func precedesInUTF8Order(_ other: String) -> Bool {
        let answer = utf8.withContiguousStorageIfAvailable { l in
            other.utf8.withContiguousStorageIfAvailable { r -> Bool in
                let common = Swift.min(l.count, r.count)
                var i = 0
                while i < common {
                    if l[i] != r[i] { return l[i] < r[i] }
                    i += 1
                }
                return l.count < r.count
            }
        }
        if let answer, let answer { return answer }
        return utf8.lexicographicallyPrecedes(other.utf8)  // a string without contiguous UTF-8
    }
}

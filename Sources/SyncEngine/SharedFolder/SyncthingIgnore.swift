import Foundation

/// Whether Syncthing, sharing the folder, would pick up syncd's temporary files.
///
/// syncd writes each file it publishes under a temporary dot-name, then renames it into place
/// (`.<device>.json.<pid>.<part>.tmp`). Syncthing ignores only its own temporaries; a scan that
/// lists the folder in the moment between the two indexes the temporary file, and the peers then
/// fail to pull it (it is gone), keep a partial copy of it for a day, and show "failed items".
/// One line in the folder's `.stignore` on each device prevents it: ``recommendedLine``.
public enum SyncthingIgnore {
    /// The line to add to `.stignore`: every dot-file with `.json.` in its name and ending in
    /// `.tmp` (`(?d)`: Syncthing may delete such a file when it removes a directory holding it).
    public static let recommendedLine = "(?d).*.json.*.tmp"

    /// Advice for a person when the folder at `path` is in a folder Syncthing shares (it, or a
    /// directory above it, holds Syncthing's `.stfolder` marker: Syncthing reads `.stignore`
    /// there only) and that `.stignore` does not hold a line ignoring syncd's temporary files;
    /// nil otherwise. An `.stignore` that includes another file (`#include`) is taken to know
    /// what it does.
    public static func advice(forFolder path: String) -> String? {
        let folder = URL(fileURLWithPath: path).standardizedFileURL.path
        guard let root = syncthingRoot(of: folder) else { return nil }
        let ignoreFile = (root == "/" ? "" : root) + "/.stignore"
        let text = (try? String(contentsOfFile: ignoreFile, encoding: .utf8)) ?? ""
        for line in text.split(whereSeparator: \.isNewline) {
            var pattern = line.trimmingCharacters(in: .whitespaces)
            if pattern.hasPrefix("#include") { return nil }
            // Flags may come in any order before the pattern: (?d), (?i).
            while pattern.hasPrefix("(?d)") || pattern.hasPrefix("(?i)") { pattern.removeFirst(4) }
            // A pattern starting with "/" matches at the root of Syncthing's folder only.
            if pattern.hasPrefix("/") && root != folder { continue }
            if ignoringPatterns.contains(pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern) { return nil }
        }
        return "the shared folder is in a folder Syncthing shares: add the line \(recommendedLine) to \(ignoreFile) on every device sharing it, "
            + "so that Syncthing does not pick up syncd's temporary files while they are written (its peers would fail to pull them, "
            + "keep partial copies for a day and show failed items)"
    }

    /// The nearest directory, `path` or one above it, that holds Syncthing's `.stfolder` marker.
    static func syncthingRoot(of path: String) -> String? {
        var directory = URL(fileURLWithPath: path).standardizedFileURL
        while true {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent(".stfolder").path) {
                return directory.path
            }
            let parent = directory.deletingLastPathComponent()
            guard parent.path != directory.path else { return nil }
            directory = parent
        }
    }

    /// Lines that ignore every temporary name of syncd's (without flags).
    static let ignoringPatterns: Set<String> = [".*.json.*.tmp", ".*.tmp", "*.tmp", ".*"]
}

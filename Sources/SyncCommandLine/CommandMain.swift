import ArgumentParser
import SyncEngine

extension AsyncParsableCommand {
    /// What `main` does for `syncctl` and `syncd`: tune the allocator (``MemoryAllocator/tune()``)
    /// first, then parse and run as ArgumentParser's own `main` does; a mistyped command is
    /// answered with the command it most likely meant.
    public static func mainWithTunedAllocator() async {
        MemoryAllocator.tune()
        // `help WORD` of a word that names no command is the same mistake as `WORD` alone (the
        // library's help would print the overview, and exit 0).
        let arguments = commandFirst(Array(CommandLine.arguments.dropFirst()))
        if arguments.first == "help", let mistake = unknownCommand(in: Array(arguments.dropFirst())) {
            exit(withError: mistake)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exit(withError: unknownCommand(in: arguments) ?? error)
        }
        do {
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// `arguments` with the subcommand first when the options every subcommand takes come before
    /// it (`syncctl --state /var/lib/syncd conflicts`, as git takes `git -C DIR status`): the
    /// library reads a subcommand's options only after its name. Options that take a value skip
    /// it, so a value that happens to be a command's name (`--device merge status`) stays a value.
    static func commandFirst(_ arguments: [String]) -> [String] {
        guard !configuration.subcommands.isEmpty else { return arguments }
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-"), arguments[index] != "--" {
            let (option, value) = (String(arguments[index].prefix { $0 != "=" }), arguments[index].contains("="))
            // Only the commands' own options: the library's (`--generate-completion-script bash`)
            // stay where they are.
            guard GlobalOptions.optionsTakingAValue.contains(option) || GlobalOptions.flags.contains(option) else {
                return arguments
            }
            // (`--state DIR` is two arguments, `--state=DIR` one.)
            index += GlobalOptions.optionsTakingAValue.contains(option) && !value ? 2 : 1
        }
        // (A word that names no command goes first too: it is then said to be unknown, with the
        // command it most likely meant, as when it comes first.)
        guard index > 0, index < arguments.count, arguments[index] != "--" else { return arguments }
        var reordered = arguments
        let command = reordered.remove(at: index)
        return [command] + reordered
    }

    /// When `arguments` start with a word that is none of this command's subcommands: the error
    /// that says so, with the nearest subcommand when one is a typing slip away.
    static func unknownCommand(in arguments: [String]) -> ValidationError? {
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard configuration.subcommands.count > 0, let word = arguments.first, !word.hasPrefix("-"),
            !names.contains(word)
        else { return nil }
        let program = configuration.commandName ?? _commandName
        let nearest = names.map { (name: $0, distance: editDistance(word, $0)) }.min { $0.distance < $1.distance }
        if let nearest, nearest.distance <= max(1, min(2, word.count / 3)) {
            return ValidationError(
                "unknown command '\(word)'. Did you mean '\(nearest.name)'? (\(program) --help lists the commands)")
        }
        return ValidationError("unknown command '\(word)' (\(program) --help lists the commands)")
    }
}

/// The edit distance between `a` and `b`, by characters: insertions, deletions, substitutions and
/// swaps of two neighbours (`mrege` is one slip from `merge`). Written here: no package of the
/// mirror offers one, and a command name is a few letters.
func editDistance(_ a: String, _ b: String) -> Int {
    let (a, b) = (Array(a), Array(b))
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    // distance[i][j]: between the first i characters of a and the first j of b.
    var distance = (0...a.count).map { i in (0...b.count).map { j in i == 0 ? j : j == 0 ? i : 0 } }
    for i in 1...a.count {
        for j in 1...b.count {
            distance[i][j] = min(
                distance[i - 1][j] + 1, distance[i][j - 1] + 1, distance[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                distance[i][j] = min(distance[i][j], distance[i - 2][j - 2] + 1)
            }
        }
    }
    return distance[a.count][b.count]
}

import ArgumentParser
import SnapshotFormat
import SnapshotModels

extension ShoppingListCommand {
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show items that devices changed without seeing each other's change.",
            discussion: """
                Every device shows the same current version [0]; the others wait until someone \
                resolves the item with shopping-list resolve.
                """)

        @OptionGroup var options: DeviceOptions

        func run() throws {
            try show(options.release)
        }

        private func show<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let conflicts = try options.open().conflicts(of: release)
            if conflicts.isEmpty { return print("No conflicts.") }
            for conflict in conflicts {
                print("\(short(conflict.id))  in conflict:")
                let width = conflict.candidates.map { ($0.modifiedBy?.rawValue ?? "?").count }.max() ?? 1
                for candidate in conflict.candidates {
                    let device = candidate.modifiedBy?.rawValue ?? "?"
                    var line = "  [\(candidate.index)] " + device + String(repeating: " ", count: width - device.count)
                    line += "  \(candidate.lastModified?.written ?? "(no time)")  "
                    if candidate.isDeletion {
                        line += "(removed)"
                    } else if let value = candidate.value {
                        line += describe(release.entry(value))
                    } else {
                        line += "(cannot show: \(candidate.problem ?? "unreadable"))"
                    }
                    print(line + (candidate.index == 0 ? "  current" : ""))
                }
                print("  resolve with: shopping-list resolve \(short(conflict.id)) --keep N")
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve an item's conflict: keep one version, or give new content.",
            discussion: "The resolution supersedes every version, so every device drops the conflict when it syncs.")

        @OptionGroup var options: DeviceOptions
        @Argument(help: "The item's id, or the start of it.") var id: String
        @Option(help: "Keep version N as shopping-list conflicts numbers them.") var keep: Int?
        @Option(help: "New content: the name (starting from the current version).") var name: String?
        @Option(help: "New content: the amount.") var amount: String?
        @Option(help: "New content: the aisle (release v2 only).") var aisle: String?

        func validate() throws {
            let newContent = name != nil || amount != nil || aisle != nil
            guard (keep != nil) != newContent else {
                throw ValidationError("give either --keep N or new content (--name, --amount, --aisle)")
            }
            if aisle != nil && options.schema == .v1 { throw ValidationError("--aisle needs release v2 (--schema v2)") }
        }

        func run() throws {
            try resolve(options.release)
        }

        private func resolve<Release: ShoppingRelease>(_ release: Release.Type) throws {
            let store = try options.open()
            let wanted = id.uppercased()
            let matches = try store.conflicts(of: release).filter { $0.id.rawValue.hasPrefix(wanted) }
            guard matches.count == 1, let conflict = matches.first else {
                throw ValidationError("no single item in conflict starts with \(id): see shopping-list conflicts")
            }
            if let keep {
                guard conflict.candidates.contains(where: { $0.index == keep }) else {
                    throw ValidationError("there is no version [\(keep)]: see shopping-list conflicts")
                }
                try store.resolve(conflict, keeping: keep)
                return print("resolved \(short(conflict.id)): kept version [\(keep)]")
            }
            guard let current = conflict.candidates.first?.value else {
                throw ValidationError("this release cannot read the current version: resolve with --keep N")
            }
            var entry = release.entry(current)
            if let name { entry.name = name }
            if let amount { entry.amount = amount.isEmpty ? nil : amount }
            if let aisle { entry.aisle = aisle.isEmpty ? nil : aisle }
            try store.resolve(conflict, with: release.value(entry))
            print("resolved \(short(conflict.id)): \(describe(entry))")
        }
    }
}

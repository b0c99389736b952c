import ArgumentParser
import SyncCommandLine

/// `syncctl`: the manual tool of SnapshotSync.
@main
struct SyncctlCommand: AsyncParsableCommand {
    static func main() async {
        await mainWithTunedAllocator()
    }

    static let configuration = CommandConfiguration(
        commandName: "syncctl",
        abstract: "Merge, inspect and edit the records of a SnapshotSync shared folder by hand.",
        discussion: """
            Each device writes a snapshot of its records into a shared folder that a file-sync tool \
            (Syncthing, Dropbox, Nextcloud, NFS...) keeps in step: one file, <device>.json, or once \
            it is large, parts <device>.<prefix>.json by record id. syncctl merges every device's \
            files record by record into a local store, and publishes this device's files.

            Settings come from, highest first: options; SYNCD_SHARED, SYNCD_STATE, SYNCD_DEVICE, \
            SYNCD_CONFIG, SYNCD_MAX_FILE_SIZE; the --config file, else $XDG_CONFIG_HOME/syncd/config.json \
            (or ~/.config/syncd/config.json) ({"shared": ..., "state": ..., "device": ...}). The system \
            syncd.service's /etc/syncd/config.json is read only by --config: \
            sudo -u syncd syncctl conflicts --config /etc/syncd/config.json --state /var/lib/syncd.

            Start with:  syncctl merge --shared ~/Sync/lists --device laptop
            """,
        version: Release.versionLine("syncctl"),
        subcommands: [
            Merge.self, Status.self, List.self, Get.self, Export.self, Put.self, Delete.self, Conflicts.self,
            Resolve.self, Tidy.self, Key.self, Trust.self, Untrust.self,
        ]
    )
}

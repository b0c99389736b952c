/// The `config.xml` one harness instance starts with (schema version 36, Syncthing 1.19).
///
/// Written before the first start, so that Syncthing never runs with its default configuration,
/// which listens on every interface and enables discovery and relays. Elements left out take
/// their defaults.
struct SyncthingConfiguration {
    /// A device this instance knows; `address` nil means `dynamic` (it never dials that device).
    struct Peer {
        var id: String
        var name: String
        var address: String?
    }

    var folderID: String
    var folderPath: String
    /// Every device the folder is shared with, this instance's own included.
    var devices: [Peer]
    var guiPort: Int
    var syncPort: Int
    var apiKey: String

    var xml: String {
        let folderDevices = devices.map { #"<device id="\#($0.id)" introducedBy=""></device>"# }.joined()
        let deviceEntries = devices.map { peer in
            #"  <device id="\#(peer.id)" name="\#(peer.name)" compression="metadata" introducer="false"><address>\#(peer.address ?? "dynamic")</address></device>"#
        }.joined(separator: "\n")
        return """
            <configuration version="36">
              <folder id="\(folderID)" label="\(folderID)" path="\(escaped(folderPath))" type="sendreceive" rescanIntervalS="10"
                      fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
                <filesystemType>basic</filesystemType>
                \(folderDevices)
                <markerName>.stfolder</markerName><maxConflicts>10</maxConflicts>
              </folder>
            \(deviceEntries)
              <gui enabled="true" tls="false"><address>127.0.0.1:\(guiPort)</address><apikey>\(apiKey)</apikey></gui>
              <options>
                <listenAddress>tcp://127.0.0.1:\(syncPort)</listenAddress>
                <globalAnnounceEnabled>false</globalAnnounceEnabled><localAnnounceEnabled>false</localAnnounceEnabled>
                <relaysEnabled>false</relaysEnabled><natEnabled>false</natEnabled><startBrowser>false</startBrowser>
                <urAccepted>-1</urAccepted><urSeen>3</urSeen><autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                <crashReportingEnabled>false</crashReportingEnabled><reconnectionIntervalS>5</reconnectionIntervalS>
                <restartOnWakeup>false</restartOnWakeup><setLowPriority>false</setLowPriority>
                <announceLANAddresses>false</announceLANAddresses>
              </options>
            </configuration>

            """
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}

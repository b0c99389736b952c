import ArgumentParser
import Foundation
import SnapshotFormat
import SyncCommandLine
import SyncEngine

extension SyncctlCommand {
    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "key",
            abstract: "Print this device's public key, which signs every file it publishes.",
            discussion: """
                Prints the key (ed25519:...) on standard output, and its fingerprint on standard \
                error: give the key to the devices that should trust this one (syncctl trust \
                DEVICE KEY there), and compare the fingerprint on both screens.

                The private key is signing.key in the state directory (mode 0600); it never goes \
                into the shared folder. Back it up with the state directory.

                --rotate makes a new key pair (the old private key is kept as signing.key.old) and \
                publishes every file of this device again, signed with it. Devices that trust this \
                one reject its files until they trust the new key: see docs/trust.md, "Rolling a key".

                Example (the key of the laptop, trusted on the desktop):
                  laptop$  syncctl key
                  desktop$ syncctl trust laptop ed25519:...
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Flag(help: "Make a new key pair and publish this device's files signed with it.") var rotate = false

        struct Printed: Codable {
            var device: String
            var key: String
            var fingerprint: String
            var publishedFiles: [String]?
        }

        func run() async throws {
            try await reportingFailures {
                let device =
                    try await rotate
                    ? global.openDevice() : global.openDeviceForReading(creating: true, notingFolderProblem: false)
                var printed: Printed
                if rotate {
                    let (key, report) = try device.rotateKey()
                    printed = Printed(
                        device: device.device.rawValue, key: key.publicKey.text, fingerprint: key.publicKey.fingerprint,
                        publishedFiles: report.publishedFiles)
                } else {
                    let key = device.key.publicKey
                    printed = Printed(device: device.device.rawValue, key: key.text, fingerprint: key.fingerprint)
                }
                if !rotate, DeviceKey.hasUnfinishedRotation(in: device.settings.stateDirectory) {
                    printNote(
                        "a key rotation was cut short (its new key is not in place yet): the next syncctl merge, or syncd's next pass, finishes it if it was decided and says so, else undoes it; this is the key in use until then"
                    )
                }
                if output.json { return try printJSON(printed) }
                print(printed.key)
                printNote("fingerprint \(printed.fingerprint) (device \(printed.device))")
                if let files = printed.publishedFiles {
                    printNote(
                        "new key made; \(files.count) file(s) of this device published again, signed with it. On every device that trusts \(printed.device), run: syncctl trust \(printed.device) \(printed.key)"
                    )
                }
            }
        }
    }

    struct Trust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust",
            abstract: "Merge only the files of the devices you trust, signed with their keys.",
            discussion: """
                With no trusted device, every file in the shared folder merges, signed or not. Once \
                one device is trusted, only files of trusted devices (this one included) whose \
                signature verifies with their trusted key merge; every other file is rejected as a \
                whole and reported, and what merged before stays.

                  syncctl trust DEVICE KEY        trust KEY (from `syncctl key` on DEVICE) for
                                                  DEVICE, replacing the key trusted before
                  syncctl trust --review          list the keys the folder's files carry, with
                                                  fingerprints, and trust the ones you confirm
                  syncctl trust --review --accept FINGERPRINT ...
                                                  the same without questions (scripts)
                  syncctl trust --list            the devices trusted now

                Compare each fingerprint with `syncctl key` on the device itself: a key in the \
                folder proves nothing by itself, as anyone who can write there can put one. \
                The next merge reads every file again (a running syncd does it at once).
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Flag(help: "List the trusted devices and their keys.") var list = false
        @Flag(help: "Review the keys that the shared folder's files carry, and trust the ones you confirm.")
        var review = false
        @Option(
            help: ArgumentHelp(
                "With --review: trust the key with this fingerprint (or this key), without asking (repeatable).",
                valueName: "fingerprint"))
        var accept: [String] = []
        @Argument(help: "The device to trust (its ID).") var device: DeviceID?
        @Argument(help: "Its public key, ed25519:... as `syncctl key` prints it on that device.") var key: String?

        func validate() throws {
            let modes = [list, review, device != nil].filter { $0 }.count
            guard modes == 1 else {
                throw ValidationError("give DEVICE KEY, or --list, or --review (one of them)")
            }
            if device != nil, key == nil {
                throw ValidationError("give the key to trust for \(device!): syncctl trust \(device!) ed25519:…")
            }
            if let key, key.hasPrefix("ed25519-private:") {
                throw ValidationError(
                    "that is a private key (a signing.key's content): keep it secret, and never give it to another device. Give the public key instead, as `syncctl key` prints it (ed25519:…)"
                )
            }
            if let device, let key, PublicKey(text: key) == nil {
                throw ValidationError(
                    "\"\(key)\" is not a public key: give it as `syncctl key` prints it on \(device), ed25519: then 44 characters of base64"
                )
            }
            if !accept.isEmpty, !review { throw ValidationError("--accept goes with --review") }
        }

        func run() async throws {
            try await reportingFailures {
                let syncDevice = try await list ? global.openDeviceForReading() : global.openDevice()
                if list { return try printList(syncDevice) }
                if review { return try reviewKeys(syncDevice) }
                // validate() made sure of both.
                guard let deviceID = device, let key = key.flatMap(PublicKey.init(text:)) else { return }
                let name = deviceID.rawValue
                let wasActive = try !syncDevice.trustedDevices().isEmpty
                let before = try syncDevice.trust(key, for: deviceID)
                if output.json { return try printJSON(try syncDevice.trustedDevices()) }
                if before == key {
                    return print(
                        "\(name) is trusted with this key already (fingerprint \(key.fingerprint)); nothing changed.")
                }
                if let before {
                    print("Trusting \(name) with key fingerprint \(key.fingerprint) (instead of \(before.fingerprint))")
                } else {
                    print("Trusting \(name) with key fingerprint \(key.fingerprint)")
                }
                try explainChange(syncDevice, wasActive: wasActive)
            }
        }

        private func printList(_ device: SyncDevice) throws {
            let trusted = try device.trustedDevices()
            if output.json { return try printJSON(trusted) }
            guard !trusted.isEmpty else {
                print("No device is trusted: every file in the shared folder merges, signed or not.")
                print("To merge only signed files of devices you trust: syncctl trust --review")
                return
            }
            print("Only files signed by these devices' keys merge:")
            for entry in trusted {
                print(
                    "  " + padded(entry.device, 16) + " " + entry.key + "  " + entry.fingerprint
                        + (entry.isThisDevice ? "  (this device)" : ""))
            }
        }

        private func reviewKeys(_ device: SyncDevice) throws {
            let keys = try device.keysInFolder()
            let wasActive = try !device.trustedDevices().isEmpty
            if output.json, accept.isEmpty { return try printJSON(keys) }
            let candidates = keys.filter(\.canBeTrusted)
            if !output.json { describe(keys, candidates: candidates) }
            var chosen: [FolderKey] = []
            if !accept.isEmpty {
                func normalized(_ text: String) -> String { text.lowercased().filter { !$0.isWhitespace } }
                for wanted in accept {
                    let named = keys.filter {
                        $0.key != nil && (normalized($0.fingerprint ?? "") == normalized(wanted) || $0.key == wanted)
                    }
                    // Only keys whose files verify (or trusted already) can be meant: a file that
                    // merely names a key, under another device's name, must not block its owner's.
                    let matches = named.filter { $0.isTrusted || $0.validlySigned > 0 }
                    guard matches.count == 1, let match = matches.first else {
                        throw UsageProblem(
                            message: !matches.isEmpty
                                ? "fingerprint \(wanted) matches several keys (\(matches.map(\.device).joined(separator: ", "))); give the whole key instead"
                                : named.isEmpty
                                    ? "no file in the shared folder carries a key with fingerprint \(wanted); see syncctl trust --review"
                                    : "no signature verifies with the key of fingerprint \(wanted) in the files that carry it (\(named.flatMap(\.files).joined(separator: ", "))): they were changed after signing, or forged. Not trusted"
                        )
                    }
                    if match.isTrusted {
                        // Already done: a script run twice succeeds.
                        if !output.json {
                            print("\(match.device) is trusted with key fingerprint \(match.fingerprint!) already.")
                        }
                        continue
                    }
                    if !chosen.contains(match) { chosen.append(match) }
                }
            } else if !candidates.isEmpty {
                guard isatty(STDIN_FILENO) == 1, !output.json else {
                    print("")
                    print("Nothing trusted: standard input is not a terminal. After comparing the fingerprints")
                    print("with `syncctl key` on each device, run: syncctl trust --review --accept 'FINGERPRINT' …")
                    return
                }
                print("")
                print("Compare each fingerprint with `syncctl key` on that device before you answer.")
                for candidate in candidates where !chosen.contains(where: { $0.device == candidate.device }) {
                    let clash = candidates.filter { $0.device == candidate.device }.count > 1
                    print(
                        "Trust \(candidate.device) with key fingerprint \(candidate.fingerprint!)"
                            + (clash ? " (the key of \(candidate.files.joined(separator: ", ")))" : "") + "? [y/N] ",
                        terminator: "")
                    fflush(nil)
                    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                    if answer == "y" || answer == "yes" { chosen.append(candidate) }
                }
            }
            let devices = chosen.map(\.device)
            if Set(devices).count != devices.count {
                throw UsageProblem(
                    message:
                        "one key per device: two different keys accepted claim to be the same device (\(devices.joined(separator: ", "))); at most one is genuine: compare with `syncctl key` on it"
                )
            }
            for key in chosen {
                guard let deviceID = DeviceID(key.device), let publicKey = key.key.flatMap(PublicKey.init(text:)) else {
                    continue
                }
                try device.trust(publicKey, for: deviceID)
            }
            if output.json { return try printJSON(try device.trustedDevices()) }
            guard !chosen.isEmpty else {
                if !candidates.isEmpty { print("Nothing trusted.") }
                return
            }
            for key in chosen { print("Trusting \(key.device) with key fingerprint \(key.fingerprint!)") }
            try explainChange(device, wasActive: wasActive)
        }

        private func describe(_ keys: [FolderKey], candidates: [FolderKey]) {
            guard !keys.isEmpty else {
                print("No file of another device is in the shared folder yet.")
                return
            }
            print("Keys that other devices' files in the shared folder carry:")
            for key in keys {
                var line = "  " + padded(key.device, 16) + " "
                if let fingerprint = key.fingerprint {
                    line += fingerprint + "  " + (key.key ?? "")
                } else {
                    line += padded("(unsigned)", 24)
                }
                print(line)
                let shown = key.files.prefix(3).joined(separator: ", ")
                var state = "      " + shown + (key.files.count > 3 ? " and \(key.files.count - 3) more" : "")
                if key.isTrusted {
                    state += "; trusted"
                } else if key.key == nil {
                    state += "; not signed, so they can never merge once any device is trusted"
                } else if key.validlySigned == 0 {
                    state += "; NO SIGNATURE VERIFIES with this key (changed after signing, or forged): not offered"
                } else if key.trustedKey != nil {
                    state +=
                        "; a different key is trusted for \(key.device): this is \(key.device)'s new key after a rotation, an older key of it, or an impostor's"
                }
                if key.key != nil, key.validlySigned > 0, key.validlySigned < key.files.count {
                    state += "; \(key.files.count - key.validlySigned) of them do not verify"
                }
                print(state)
            }
            // Two keys claiming one device: one of them, at least, is not that device's.
            let claimed = Dictionary(grouping: keys.filter { $0.key != nil && $0.validlySigned > 0 }, by: \.device)
            for (device, claims) in claimed.sorted(by: { $0.key < $1.key }) where claims.count > 1 {
                print(
                    "WARNING: \(claims.count) different keys claim to be \(device): at most one is \(device)'s genuine key, the others are forged or old. Compare each fingerprint with `syncctl key` on \(device) itself."
                )
            }
            if candidates.isEmpty {
                print(
                    "No key to trust: every key here is trusted already, unsigned, or carried by files whose signatures do not verify."
                )
            }
        }

        private func explainChange(_ device: SyncDevice, wasActive: Bool) throws {
            if !wasActive {
                print(
                    "From now on this device merges only files signed by the trusted devices (this one included); other files are rejected and reported."
                )
            }
            let untrusted = try device.untrustedDevicesSeen()
            if !untrusted.isEmpty {
                print(
                    "Not trusted, so their files will be rejected: \(untrusted.joined(separator: ", ")) (see syncctl trust --review)"
                )
            }
            print("The next merge reads every file again (a running syncd does it now).")
        }
    }

    struct Untrust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "untrust",
            abstract: "Stop merging a device's files (a lost or retired device).",
            discussion: """
                The device's files are rejected from the next merge on; what merged from them before \
                stays. When a device is lost or stolen, untrust it on every other device: its key \
                could still sign files. Untrusting the last other device leaves this device alone \
                trusted: only its own files merge.

                To stop checking signatures altogether (every file merges again, signed or not), \
                untrust every other device, then this device itself.

                Example:
                  syncctl untrust old-phone
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The device to stop trusting (its ID).") var device: DeviceID

        func run() async throws {
            try await reportingFailures {
                let syncDevice = try await global.openDevice()
                let outcome = try syncDevice.untrust(device)
                guard outcome != .wasNotTrusted else {
                    throw UsageProblem(
                        message: device == syncDevice.device
                            ? "signatures are not checked already (no device is trusted); see syncctl trust --list"
                            : "\(device) is not trusted; see syncctl trust --list")
                }
                if output.json { return try printJSON(try syncDevice.trustedDevices()) }
                switch outcome {
                case .untrusted, .wasNotTrusted:
                    print("No longer trusting \(device): its files are rejected from the next merge on.")
                case .onlyThisDeviceTrusted:
                    print("No longer trusting \(device): its files are rejected from the next merge on.")
                    print(
                        "No other device is trusted now: only this device's own files merge. To stop checking signatures altogether: syncctl untrust \(syncDevice.device)"
                    )
                case .checkingOff:
                    print(
                        "WARNING: no device is trusted any more, so signatures are not checked: every file in the shared folder merges again, signed or not."
                    )
                }
            }
        }
    }
}

/// A note for the person at the terminal, on standard error (standard output stays for scripts).
func printNote(_ text: String) {
    StandardError.write("syncctl: \(text)\n")
}

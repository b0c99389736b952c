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
                let device = try await rotate ? global.openDevice() : global.openDeviceForReading()
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

                  syncctl trust DEVICE KEY        trust KEY (from `syncctl key` on DEVICE) for DEVICE,
                                                  replacing the key trusted for it before
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
                if let before, before != key {
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
                    let matches = candidates.filter {
                        normalized($0.fingerprint ?? "") == normalized(wanted) || $0.key == wanted
                    }
                    guard matches.count == 1 else {
                        throw UsageProblem(
                            message: matches.isEmpty
                                ? "no key that files in the folder carry has fingerprint \(wanted) (and is not trusted already); see syncctl trust --review"
                                : "fingerprint \(wanted) matches several keys; give the whole key instead")
                    }
                    chosen.append(matches[0])
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
                    print("Trust \(candidate.device) with key fingerprint \(candidate.fingerprint!)? [y/N] ", terminator: "")
                    fflush(nil)
                    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                    if answer == "y" || answer == "yes" { chosen.append(candidate) }
                }
            }
            let devices = chosen.map(\.device)
            if Set(devices).count != devices.count {
                throw UsageProblem(message: "one key per device: the keys accepted name \(devices.joined(separator: ", "))")
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
                var state = "      \(key.files.count) file(s)"
                if key.isTrusted {
                    state += "; trusted"
                } else if key.key == nil {
                    state += "; not signed, so they can never merge once any device is trusted"
                } else if key.validlySigned == 0 {
                    state += "; NO SIGNATURE VERIFIES with this key (changed after signing, or forged): not offered"
                } else if key.trustedKey != nil {
                    state += "; a different key is trusted for \(key.device) (a rotated key, or an impostor)"
                }
                if key.key != nil, key.validlySigned > 0, key.validlySigned < key.files.count {
                    state += "; \(key.files.count - key.validlySigned) of them do not verify"
                }
                print(state)
            }
            if candidates.isEmpty { print("No key to trust: every signed key here is trusted already.") }
        }

        private func explainChange(_ device: SyncDevice, wasActive: Bool) throws {
            if !wasActive {
                print(
                    "From now on this device merges only files signed by the trusted devices (this one included); other files are rejected and reported."
                )
            }
            let untrusted = try device.untrustedDevicesSeen()
            if !untrusted.isEmpty {
                print("Not trusted, so their files will be rejected: \(untrusted.joined(separator: ", ")) (see syncctl trust --review)")
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
                could still sign files. Untrusting the last device turns checking off: every file \
                merges again, signed or not.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The device to stop trusting (its ID).") var device: DeviceID

        func run() async throws {
            try await reportingFailures {
                let syncDevice = try await global.openDevice()
                guard try syncDevice.untrust(device) else {
                    throw UsageProblem(message: "\(device) is not trusted; see syncctl trust --list")
                }
                let remaining = try syncDevice.trustedDevices()
                if output.json { return try printJSON(remaining) }
                print("No longer trusting \(device): its files are rejected from the next merge on.")
                if remaining.isEmpty {
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
    FileHandle.standardError.write(Data("syncctl: \(text)\n".utf8))
}

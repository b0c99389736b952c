// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SnapshotSync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "syncctl", targets: ["syncctl"]),
        .executable(name: "syncd", targets: ["syncd"]),
        .library(name: "SnapshotFormat", targets: ["SnapshotFormat"]),
        .library(name: "SnapshotMerge", targets: ["SnapshotMerge"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
        .library(name: "SnapshotModels", targets: ["SnapshotModels"]),
        .library(name: "RecordSchemas", targets: ["RecordSchemas"]),
        .executable(name: "shopping-list", targets: ["shopping-list"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // Pure: the wire contract. No I/O.
        .target(name: "SnapshotFormat"),
        // Pure: version vectors, the last-writer order, the merge, local edits. No I/O.
        .target(name: "SnapshotMerge", dependencies: ["SnapshotFormat"]),
        // The only C: libinotifytools (Debian ships no pkg-config file: linked by name), statfs, mallopt,
        // sync_file_range, O_TMPFILE, and Ed25519 signatures through the system's OpenSSL (libcrypto).
        .systemLibrary(name: "CInotifyTools", providers: [.apt(["libinotifytools0-dev", "libssl-dev"])]),
        // One watcher per process, on its own thread (SyncEngine imports CInotifyTools too, for
        // mallopt, sync_file_range, O_TMPFILE and Ed25519).
        .target(name: "Inotify", dependencies: ["CInotifyTools"]),
        // SQLite through GRDB: the storage contract.
        .target(
            name: "SyncStore",
            dependencies: [
                "SnapshotFormat", "SnapshotMerge",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API for the two hot loops that read lines straight from a row.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // Each stored line's digest.
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // I/O: the shared folder, atomic publishing, the merge pass, configuration.
        .target(
            name: "SyncEngine",
            dependencies: [
                "SnapshotFormat", "SnapshotMerge", "SyncStore", "Inotify", "RecordSchemas", "CInotifyTools",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // syncd's metrics, written as a Prometheus text file after each pass (with # HELP lines).
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        // Pure: schemas known only at run time (JSON schema files) and validating versions against them.
        .target(name: "RecordSchemas", dependencies: ["SnapshotFormat"]),
        // Typed models for Swift apps: versioned schemas, a ReadOnly wire projection, local store and sync.
        .target(
            name: "SnapshotModels",
            dependencies: [
                "SnapshotFormat", "SnapshotMerge", "SyncStore", "SyncEngine",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "shopping-list",
            dependencies: [
                "SnapshotModels", "SnapshotFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "samples/shopping-list",
            exclude: ["README.md"]),
        // The options, exit codes and error reporting both executables share.
        .target(
            name: "SyncCommandLine",
            dependencies: [
                "SyncEngine", "SnapshotFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "syncctl",
            dependencies: [
                "SyncEngine", "SnapshotFormat", "SnapshotMerge", "SyncStore", "SyncCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "syncd",
            dependencies: [
                "SyncEngine", "SyncCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // What several test targets share: where the vectors and the built executables are, a clock.
        .target(name: "TestSupport", dependencies: ["SnapshotFormat"], path: "Tests/TestSupport"),
        .testTarget(name: "SnapshotFormatTests", dependencies: ["SnapshotFormat", "TestSupport"]),
        .testTarget(
            name: "SnapshotMergeTests",
            dependencies: [
                "SnapshotMerge", "SnapshotFormat", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "SyncStoreTests",
            dependencies: [
                "SyncStore", "SnapshotFormat", "SnapshotMerge", .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: [
                "SyncEngine", "SyncStore", "SnapshotFormat", "SnapshotMerge", "SyncCommandLine", "TestSupport", "CInotifyTools",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Runs the built executables as real processes.
        .testTarget(name: "EndToEndTests", dependencies: ["SnapshotFormat", "SnapshotMerge", "SyncStore", "TestSupport"]),
        .testTarget(name: "RecordSchemasTests", dependencies: ["RecordSchemas", "SnapshotFormat"]),
        .testTarget(
            name: "SnapshotModelsTests",
            dependencies: ["SnapshotModels", "SnapshotFormat", "SnapshotMerge", "SyncStore", "SyncEngine", "TestSupport"]),
        // systemd-analyze verify and security on the units in systemd/.
        .testTarget(name: "SystemdUnitTests", dependencies: ["TestSupport"]),
        // Runs two real Syncthing instances on 127.0.0.1, one real syncd per side (docs/syncthing-testing.md).
        .testTarget(name: "SyncthingTests", dependencies: ["TestSupport"]),
        // Runs real syncd processes against real folders, inotify and notify sockets.
        .testTarget(
            name: "DaemonTests", dependencies: ["SnapshotFormat", "SnapshotMerge", "SyncStore", "Inotify", "TestSupport"]),
        // Builds the libFuzzer targets of fuzz/ with scripts/fuzz.sh and runs each briefly (docs/fuzzing.md).
        .testTarget(name: "FuzzSmokeTests", dependencies: ["TestSupport"]),
        // Inspects, installs into a throwaway root and lints the Debian package `make deb` built (docs/packaging.md).
        .testTarget(name: "PackageTests", dependencies: ["TestSupport"]),
    ]
)

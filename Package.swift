// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SnapshotSync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "syncctl", targets: ["syncctl"]),
        .library(name: "SnapshotFormat", targets: ["SnapshotFormat"]),
        .library(name: "SnapshotMerge", targets: ["SnapshotMerge"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // Pure: the wire contract. No I/O.
        .target(name: "SnapshotFormat"),
        // Pure: version vectors, the last-writer order, the merge, local edits. No I/O.
        .target(name: "SnapshotMerge", dependencies: ["SnapshotFormat"]),
        // SQLite through GRDB: the storage contract.
        .target(
            name: "SyncStore",
            dependencies: [
                "SnapshotFormat", "SnapshotMerge",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // I/O: the shared folder, atomic publishing, the merge pass, configuration.
        .target(
            name: "SyncEngine",
            dependencies: [
                "SnapshotFormat", "SnapshotMerge", "SyncStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .executableTarget(
            name: "syncctl",
            dependencies: [
                "SyncEngine", "SnapshotFormat", "SnapshotMerge", "SyncStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "SnapshotFormatTests", dependencies: ["SnapshotFormat"]),
        .testTarget(
            name: "SnapshotMergeTests",
            dependencies: [
                "SnapshotMerge", "SnapshotFormat",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(name: "SyncStoreTests", dependencies: ["SyncStore", "SnapshotFormat", "SnapshotMerge"]),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: [
                "SyncEngine", "SyncStore", "SnapshotFormat", "SnapshotMerge",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Runs the built executables as real processes.
        .testTarget(name: "EndToEndTests", dependencies: ["SnapshotFormat", "SnapshotMerge", "SyncStore"]),
    ]
)

// swift-tools-version: 6.0
// The cost of signing and verifying a file per MB, with the library and the calls the engine
// uses (swift-crypto's Curve25519.Signing over the file's bytes): docs/performance.md.
//   swift run -c release --package-path bench/signing --scratch-path .build-bench-signing
import PackageDescription

let package = Package(
    name: "signing-cost",
    dependencies: [.package(url: "https://github.com/apple/swift-crypto", from: "3.12.3")],
    targets: [
        .executableTarget(name: "signing-cost", dependencies: [.product(name: "Crypto", package: "swift-crypto")])
    ]
)

// swift-tools-version:6.0
import PackageDescription

/// C libraries come from Debian packages (see Scripts/bootstrap); no Swift package dependencies.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "pulse-pack",
    products: [
        .executable(name: "pulse-pack", targets: ["pulse-pack"]),
        .library(name: "PulsePack", targets: ["PulsePack"]),
        .executable(name: "pulse-origin", targets: ["pulse-origin"]),  // pulse-origin (static asset origin)
    ],
    targets: [
        // C, bottom: module map + shim header + pkg-config name.
        systemLibrary("COpenSSL", pkgConfig: "libcrypto", apt: "libssl-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        systemLibrary("CQPDF", pkgConfig: "libqpdf", apt: "libqpdf-dev"),
        systemLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        systemLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),

        // Safe wrappers: the only modules that import C or touch unsafe pointers.
        .target(name: "PulseCrypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .target(name: "PulsePDF", dependencies: ["CQPDF"], swiftSettings: swiftSettings),

        // Pure-Swift domain.
        .target(name: "PulseCore", dependencies: ["PulseCrypto"], swiftSettings: swiftSettings),
        .target(name: "PulseStore", dependencies: ["PulseCore", "PulseCrypto"], swiftSettings: swiftSettings),
        .target(name: "PulseCommandLine", swiftSettings: swiftSettings),
        .target(
            name: "PulsePack",
            dependencies: ["PulseCore", "PulseStore", "PulseCrypto", "PulsePDF", "PulseCommandLine"],
            swiftSettings: swiftSettings
        ),

        // Thin executables: parse arguments, call a library.
        .executableTarget(name: "pulse-pack", dependencies: ["PulsePack"], swiftSettings: swiftSettings),

        .testTarget(name: "PulseCryptoTests", dependencies: ["PulseCrypto", "PulseCore"], swiftSettings: swiftSettings),
        .testTarget(name: "PulsePDFTests", dependencies: ["PulsePDF"], swiftSettings: swiftSettings),
        .testTarget(name: "PulseCoreTests", dependencies: ["PulseCore"], swiftSettings: swiftSettings),
        .testTarget(name: "PulseCommandLineTests", dependencies: ["PulseCommandLine"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PulsePackTests",
            dependencies: ["PulsePack", "PulseCore", "PulseStore", "PulseCrypto", "PulsePDF"],
            swiftSettings: swiftSettings
        ),

        // ── pulse-origin: static asset origin on libmicrohttpd (docs/origin.md) ──────────────────────
        // PulseHTTPServer is the only module importing CMicroHTTPD; PulseOrigin is pure Swift.
        .target(name: "PulseHTTPServer", dependencies: ["CMicroHTTPD"], swiftSettings: swiftSettings),
        .target(
            name: "PulseOrigin",
            dependencies: ["PulseHTTPServer", "PulseStore", "PulseCore", "PulseCrypto", "PulseCommandLine"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "pulse-origin", dependencies: ["PulseOrigin"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PulseOriginTests",
            dependencies: ["PulseOrigin", "PulseHTTPServer", "PulseCrypto", "PulseCommandLine"],
            swiftSettings: swiftSettings
        ),
        // ── end pulse-origin ─────────────────────────────────────────────────────────────────────────
    ],
    swiftLanguageModes: [.v6]
)

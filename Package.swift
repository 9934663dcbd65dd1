// swift-tools-version:6.0
import PackageDescription

/// C libraries come from Debian packages (see Scripts/bootstrap); no Swift package dependencies.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

func target(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .target(name: name, dependencies: dependencies, swiftSettings: swiftSettings)
}

func testTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .testTarget(name: name, dependencies: dependencies, swiftSettings: swiftSettings)
}

let package = Package(
    name: "pulse-pack",
    products: [
        .executable(name: "pulse-pack", targets: ["pulse-pack"]),
        .executable(name: "pulse-pack-ops", targets: ["pulse-pack-ops"]),
        .executable(name: "pulse-origin", targets: ["pulse-origin"]),
        .executable(name: "pulse-server", targets: ["pulse-server"]),
        .executable(name: "pulse-device", targets: ["pulse-device"]),
        .executable(name: "pulse-conformance", targets: ["pulse-conformance"]),
        .library(name: "PulseDevice", targets: ["PulseDevice"]),
        .library(name: "PulsePack", targets: ["PulsePack"]),
    ],
    targets: [
        // Each target sits under the comment of its layer; Scripts/check/layering reads them (and fails on a
        // target under none), so what may import C, hold a pointer or call libc follows this file.
        // C, bottom: module map + shim header + pkg-config name.
        systemLibrary("COpenSSL", pkgConfig: "libcrypto", apt: "libssl-dev"),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        systemLibrary("CQPDF", pkgConfig: "libqpdf", apt: "libqpdf-dev"),
        systemLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        systemLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        systemLibrary("CPostgres", pkgConfig: "libpq", apt: "libpq-dev"),
        systemLibrary("CQRencode", pkgConfig: "libqrencode", apt: "libqrencode-dev"),

        // Safe wrappers: the only modules that import C or touch unsafe pointers.
        target("PulseCrypto", ["COpenSSL"]),
        target("PulsePDF", ["CQPDF", "CZlib", "PulseCrypto", "PulseSystem"]),
        target("PulseImage", ["CZlib"]),
        target("PulseHTTPServer", ["CMicroHTTPD", "PulseSystem"]),
        target("PulseSystem", []),  // Condition (the one waiting idiom: a Mutex threads can wait on); files (atomic writes, locks, errno text: restic's internal/fs), processes, clocks, execv; a raw HTTP/1.1 client over a socket (pulse-conformance, pulse-device's event stream, the HTTP tests)
        target("PulseSQLite", ["CSQLite", "PulseSystem"]),
        target("PulsePostgres", ["CPostgres", "PulseSystem"]),
        target("PulseQR", ["CQRencode", "PulseSystem"]),  // the module matrix from libqrencode (its SVG drawing is in PulseHTML)

        // Pure-Swift domain.
        target("PulseCore", ["PulseCrypto"]),
        target("PulseStore", ["PulseCore", "PulseCrypto", "PulseSystem"]),
        target("PulseHTML", ["PulseQR"]),  // the typed HTML/SVG builder (and QR codes as SVG nodes): text escaped by construction (docs/building-blocks.md)
        target("PulseLog", ["PulseCore", "PulseHTTPServer"]),  // both servers' log lines, text or OpenTelemetry-named JSON (--log-format)
        target("PulseMetrics", ["PulseSystem"]),  // Prometheus registry: lock-free counters, gauges, histograms; /proc/self
        target("PulseAge", ["PulseCrypto"]),  // the age file format (sealed key tables are PulsePack's)
        target("PulseAnswerSignature", ["PulseCore", "PulseCrypto"]),  // Pulse-Signature on sync answers (detached ES256 JWS) and the answer-key set; server and pulse-device
        target("PulseOps", ["PulseCore", "PulseStore", "PulseCrypto", "PulseSystem"]),
        target("PulseOrigin", ["PulseHTTPServer", "PulseLog", "PulseStore", "PulseCore", "PulseCrypto", "PulseSystem"]),
        target("PulsePack", ["PulseCore", "PulseStore", "PulseCrypto", "PulsePDF", "PulseImage", "PulseAge", "PulseSystem"]),
        // pulse-server: storage (records, SQLite and PostgreSQL backends), then the responders, then the composition.
        target("PulseServerStorage", ["PulseSQLite", "PulsePostgres", "PulseCore", "PulseCrypto", "PulseStore", "PulseSystem"]),
        target("PulseSyncAPI", ["PulseServerStorage", "PulseHTTPServer", "PulseOrigin", "PulseCore", "PulseCrypto", "PulseAnswerSignature"]),  // the device routes; what responders share
        target("PulseStaffAPI", ["PulseSyncAPI", "PulseServerStorage", "PulseHTTPServer", "PulseCore", "PulseSystem"]),  // /api/staff/…; the report cache waits with Condition
        // /console/…: the staff console's server-rendered pages (sign-in, CSRF, its assets and event stream).
        target("PulseConsole", ["PulseStaffAPI", "PulseSyncAPI", "PulseServerStorage", "PulseHTTPServer", "PulseHTML", "PulseQR", "PulseCore", "PulseCrypto"]),
        target("PulseServer", [
            "PulseServerStorage", "PulseSyncAPI", "PulseStaffAPI", "PulseConsole", "PulseSQLite", "PulsePostgres", "PulseCore", "PulseCrypto", "PulseStore",
            "PulseAge", "PulseHTTPServer", "PulseOrigin", "PulseSystem",
        ]),
        // Metrics apart from the routes they count (--metrics-listen): the listener, both servers' request families, the origin's.
        target("PulseObservability", ["PulseMetrics", "PulseHTTPServer", "PulseOrigin"]),
        target("PulseServerMetrics", ["PulseObservability", "PulseMetrics", "PulseCore", "PulseHTTPServer", "PulseSyncAPI", "PulseServerStorage"]),
        // pulse-server backup and restore: an online copy of a data folder (SQLite's backup API), checked, put back.
        target("PulseServerBackup", ["PulseServer", "PulseServerStorage", "PulseSQLite", "PulseCrypto", "PulseSystem"]),
        // The reference app client (an app could embed it; the key behind `DeviceKey`), and the contract suite.
        target("PulseDevice", ["PulseAnswerSignature", "PulseCrypto", "PulseCore", "PulseStore", "PulseSystem"]),
        target("PulseConformance", ["PulseDevice", "PulseAnswerSignature", "PulseCrypto", "PulseCore", "PulseSystem"]),
        // Command lines: the terminal code, above every library (restic's cmd/ apart from internal/). A library
        // depends on none of them (Scripts/check/layering): PulseCommandLine, the parser and output every tool
        // shares, then one module per tool with its options, help and output.
        target("PulseCommandLine", ["PulseCore", "PulseSystem"]),  // declared commands, typed options, one console and progress bar for every tool
        target("PulseServerCLI", [
            "PulseServer", "PulseConsole", "PulseServerBackup", "PulseServerStorage", "PulseSyncAPI", "PulseStaffAPI", "PulseAge", "PulseCore", "PulseHTTPServer", "PulseOrigin", "PulsePostgres",
            "PulseCommandLine", "PulseLog", "PulseSystem", "PulseMetrics", "PulseObservability", "PulseServerMetrics",
        ]),
        target("PulseConformanceCLI", ["PulseConformance", "PulseDevice", "PulseCore", "PulseCommandLine"]),
        target("PulseDeviceCLI", ["PulseDevice", "PulseCore", "PulseCrypto", "PulseStore", "PulseCommandLine", "PulseSystem"]),
        target("PulseOpsCLI", ["PulseOps", "PulseCore", "PulseStore", "PulseCommandLine", "PulseSystem"]),
        target("PulseOriginCLI", ["PulseOrigin", "PulseHTTPServer", "PulseLog", "PulseCore", "PulseCommandLine", "PulseSystem", "PulseMetrics", "PulseObservability"]),
        target("PulsePackCLI", ["PulsePack", "PulseAge", "PulseCore", "PulseStore", "PulsePDF", "PulseCommandLine", "PulseSystem"]),

        // Thin executables: parse arguments, call a library.
        .executableTarget(name: "pulse-pack", dependencies: ["PulsePackCLI"], swiftSettings: swiftSettings),
        // push and gc: their own executable, so pulse-pack never loads libcurl (PulsePackCLI's OpsCommands hands them over).
        .executableTarget(name: "pulse-pack-ops", dependencies: ["PulseOpsCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "pulse-origin", dependencies: ["PulseOriginCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "pulse-server", dependencies: ["PulseServerCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "pulse-device", dependencies: ["PulseDeviceCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "pulse-conformance", dependencies: ["PulseConformanceCLI"], swiftSettings: swiftSettings),
        // Scripts/bench/verify: ES256 verifies per second, measured next to `openssl speed ecdsap256`.
        .executableTarget(name: "pulse-bench-verify", dependencies: ["PulseCrypto", "PulseCommandLine", "PulseSystem"], swiftSettings: swiftSettings),
        // Scripts/bench/blocks: PulseHTML's render of a 10,000-row table, PulseMetrics' ns per operation.
        .executableTarget(name: "pulse-bench-blocks", dependencies: ["PulseHTML", "PulseMetrics", "PulseCommandLine"], swiftSettings: swiftSettings),

        testTarget("PulseCryptoTests", ["PulseCrypto", "PulseCore", "PulseTestSupport"]),
        testTarget("PulseCoreTests", ["PulseCore", "PulseTestSupport"]),
        testTarget("PulseAnswerSignatureTests", ["PulseAnswerSignature", "PulseCore", "PulseCrypto"]),
        testTarget("PulseCommandLineTests", ["PulseCommandLine", "PulseCore"]),
        testTarget("PulseHTMLTests", ["PulseHTML"]),
        testTarget("PulseQRTests", ["PulseQR", "PulseHTML", "PulseCore", "PulseTestSupport"]),
        testTarget("PulseMetricsTests", ["PulseMetrics", "PulseSystem"]),
        testTarget("PulseLogTests", ["PulseLog", "PulseCore", "PulseHTTPServer"]),
        testTarget("PulseAgeTests", ["PulseAge", "PulseCrypto", "PulseCore", "PulseStore", "PulseCommandLine", "PulsePack", "PulsePackCLI", "PulseTestSupport", "SyncTestSupport"]),
        testTarget("PulseOpsTests", ["PulseOps", "PulseOpsCLI", "PulseCore", "PulseStore", "PulseCrypto", "PulseCommandLine", "PulseTestSupport"]),
        testTarget("PulseSystemTests", ["PulseSystem", "PulseSystemTesting", "PulseTestSupport"]),
        testTarget("PulseStoreTests", ["PulseStore", "PulseCore", "PulseCrypto", "PulseTestSupport"]),
        testTarget("PulseImageTests", ["PulseImage"]),
        testTarget("PulseHTTPServerTests", ["PulseHTTPServer", "PulseSystem", "PulseSystemTesting", "PulseTestSupport"]),
        testTarget("PulseOriginTests", ["PulseOrigin", "PulseOriginCLI", "PulseHTTPServer", "PulseLog", "PulseCrypto", "PulseCommandLine", "PulseSystem", "PulseSystemTesting", "PulseTestSupport"]),
        testTarget("PulseSQLiteTests", ["PulseSQLite", "PulseTestSupport"]),
        testTarget("PulsePostgresTests", ["PulsePostgres", "PulsePostgresTesting", "PulseTestSupport"]),
        testTarget("PulseServerTests", [
            "PulseServer", "PulseServerBackup", "PulseServerCLI", "PulseServerStorage", "PulseSyncAPI", "PulseStaffAPI", "PulseSQLite", "PulseCore", "PulseCrypto", "PulseAge",
            "PulseCommandLine", "PulsePack", "PulseStore", "PulseHTTPServer", "PulsePostgres", "PulsePostgresTesting", "PulseSystem", "PulseSystemTesting", "PulseTestSupport", "SyncTestSupport",
            "PulseLog", "PulseMetrics", "PulseObservability", "PulseServerMetrics", "PulseAnswerSignature",
        ]),
        testTarget("PulsePDFTests", ["PulsePDF", "PulseCrypto", "PulseTestSupport"]),
        testTarget("PulsePackTests", ["PulsePack", "PulsePackCLI", "PulseCore", "PulseStore", "PulseCrypto", "PulsePDF", "PulseAge", "PulseCommandLine", "PulseTestSupport"]),
        // What only tests ask of PulseSystem (RawHTTPConnection's non-blocking send, read-until-quiet, closed-now;
        // a service manager's notification socket).
        .target(name: "PulseSystemTesting", dependencies: ["PulseSystem"], path: "Tests/PulseSystemTesting", swiftSettings: swiftSettings),
        // A throwaway PostgreSQL cluster (initdb in a temp folder) for the tests of every module that needs one.
        .target(name: "PulsePostgresTesting", dependencies: ["PulsePostgres"], path: "Tests/PulsePostgresTesting", swiftSettings: swiftSettings),
        // The one temporary folder (removed when released) and `eventually`, for every test target (the wrappers'
        // too: Scripts/check/layering reads what ships, and nothing under Tests/ does), and the one package folder
        // written part by part for the tests of what reads a package (push and gc, the origin, import); no server
        // in it, so the PDF and packager tests use it too.
        .target(
            name: "PulseTestSupport", dependencies: ["PulseCore", "PulseCrypto", "PulseStore", "PulseAge"], path: "Tests/PulseTestSupport",
            swiftSettings: swiftSettings),
        // pulse-server and pulse-origin in process with the samples built, and the broken servers' responder wrapper.
        .target(
            name: "SyncTestSupport",
            dependencies: ["PulseTestSupport", "PulseServer", "PulseServerCLI", "PulseServerStorage", "PulseSyncAPI", "PulseCommandLine", "PulsePack", "PulseOrigin", "PulseHTTPServer", "PulseAnswerSignature", "PulseCrypto", "PulseCore"],
            path: "Tests/SyncTestSupport", swiftSettings: swiftSettings),
        testTarget("PulseConsoleTests", [
            "PulseConsole", "PulseHTML", "PulseServer", "PulseServerStorage", "PulseSyncAPI", "PulseStaffAPI", "PulseHTTPServer", "PulseCrypto", "PulseCore",
            "PulseSystem", "PulseSystemTesting", "PulseTestSupport", "SyncTestSupport",
        ]),
        testTarget("PulseDeviceTests", [
            "PulseDevice", "PulseDeviceCLI", "PulseTestSupport", "SyncTestSupport", "PulseServer", "PulseServerStorage", "PulseSyncAPI", "PulseHTTPServer", "PulseCrypto", "PulseCore",
            "PulseStore", "PulseCommandLine", "PulseSystem", "PulseAnswerSignature",
        ]),
        testTarget("PulseConformanceTests", [
            "PulseConformance", "PulseConformanceCLI", "PulseCommandLine", "PulseDevice", "PulseTestSupport", "SyncTestSupport", "PulseServer", "PulseServerStorage", "PulseSyncAPI",
            "PulseHTTPServer", "PulseCrypto", "PulseCore", "PulseSystem", "PulseAnswerSignature",
        ]),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.0
import PackageDescription

/// One list of settings for every Swift target, so the whole package is held to the same rules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // Release builds make no run-time checks of exclusive access. Swift checks an access to a
    // class's stored property (or a global) that it cannot prove alone at compile time by a call
    // into its runtime (~100 instructions each, with its end): about 40 a resume, and 8 for
    // each observer a change reaches, 25 % of a fan-out (docs/architecture.md, "Threads").
    // Debug builds, and so every test, keep the checks; the compile-time checks stay in both.
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "Panes",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "panes", targets: ["panes"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries: one thin module each, each imported by exactly one Swift module.
        .systemLibrary(name: "CLibWebSockets", pkgConfig: "libwebsockets",
                       providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CJansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // libev, the event loop lws runs on (through Debian's libwebsockets-evlib-ev plugin).
        .systemLibrary(name: "CLibEV", providers: [.apt(["libev-dev", "libwebsockets-evlib-ev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CJWT", pkgConfig: "libjwt", providers: [.apt(["libjwt-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // libcurl (OpenSSL flavour), for webhook deliveries (only PanesWebhooks imports it).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // The server's own threads (store, heartbeat, listener): one service-thread type and the
        // monotonic clock their deadlines use. Foundation and Glibc only.
        .target(name: "PanesThreads", swiftSettings: swiftSettings),
        // The pure core: scenes, sessions, activities, preferences, drags, documents. No C, no sockets.
        .target(name: "PanesCore",
                dependencies: [.product(name: "Logging", package: "swift-log")],
                swiftSettings: swiftSettings),
        // JSON text <-> JSONValue, through jansson. The only Swift importer of CJansson (CJanssonArena,
        // its C helper below, also includes jansson.h to install jansson's allocator).
        .target(name: "PanesJSON", dependencies: ["PanesCore", "CJansson", "CJanssonArena"], swiftSettings: swiftSettings),
        // jansson's allocations while a thread decodes, from a buffer of its own (C: a thread-local).
        // DWARF 4: valgrind 3.19 (bench/callgrind.py) cannot read clang's default DWARF 5.
        .target(name: "CJanssonArena", dependencies: ["CJansson"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // Hashes, constant-time comparison and JWT verification. The only importer of COpenSSL and CJWT.
        .target(name: "PanesSecurity", dependencies: ["PanesCore", "PanesJSON", "COpenSSL", "CJWT"],
                swiftSettings: swiftSettings),
        // SQLite persistence. The only importer of CSQLite.
        .target(name: "PanesStorage", dependencies: ["PanesCore", "PanesJSON", "PanesSecurity", "CSQLite"],
                swiftSettings: swiftSettings),
        // PostgreSQL persistence shared by several nodes. The only importer of CLibPQ.
        .target(name: "PanesPostgres", dependencies: ["PanesCore", "PanesJSON", "PanesThreads", "CLibPQ"],
                swiftSettings: swiftSettings),
        // Webhook delivery: signing, libcurl on threads of its own, the outbox engine. The only
        // importer of CCurl.
        .target(name: "PanesWebhooks",
                dependencies: ["PanesCore", "PanesJSON", "PanesSecurity", "CCurl",
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: swiftSettings),
        // WebSocket + HTTP server over libwebsockets on libev. The only importer of CLibWebSockets and CLibEV.
        .target(name: "PanesTransport",
                dependencies: ["CLibWebSockets", "CLibEV", "CLibWebSocketsLog", "CLibWebSocketsAlloc",
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: swiftSettings),
        // lws's log call defined again, asking the level before formatting (C: a variadic function
        // that lws's own calls reach in its place). DWARF 4 for valgrind, as CJanssonArena.
        .target(name: "CLibWebSocketsLog", dependencies: ["CLibWebSockets"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // lws's allocator, with the upgrades' header tables in a region of their own that gives a
        // settled connect burst's pages back (C: lws calls it for every allocation). DWARF 4 as above.
        .target(name: "CLibWebSocketsAlloc", dependencies: ["CLibWebSockets"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // Wires the core to the transport, the codec and the store; owns the service-thread runtime.
        .target(name: "PanesServer",
                dependencies: ["PanesCore", "PanesJSON", "PanesStorage", "PanesTransport", "PanesThreads",
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: swiftSettings),
        .executableTarget(name: "panes",
                          dependencies: ["PanesServer", "PanesCore", "PanesJSON", "PanesStorage", "PanesTransport",
                                         "PanesSecurity", "PanesPostgres", "PanesWebhooks",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                         .product(name: "Logging", package: "swift-log")],
                          swiftSettings: swiftSettings),
        // Benchmark tools (issue 7), plain C, independent of the Swift modules.
        .executableTarget(name: "panes-load", path: "Sources/panes-load",
                          cSettings: [.define("_GNU_SOURCE"), .unsafeFlags(["-Wall", "-Wextra"])],
                          linkerSettings: [.linkedLibrary("m")]),
        .executableTarget(name: "panes-raw-broadcast", path: "Sources/panes-raw-broadcast",
                          cSettings: [.unsafeFlags(["-Wall", "-Wextra"])],
                          linkerSettings: [.linkedLibrary("websockets")]),
        // The document micro-benchmark: CPU and allocations per edit, by document size.
        .executableTarget(name: "panes-docbench",
                          dependencies: ["PanesCore", "PanesSecurity", "PanesStorage", "CAllocationCounter",
                                         .product(name: "Logging", package: "swift-log")],
                          swiftSettings: swiftSettings),
        // Counts the process's heap allocations by interposing malloc; linked by panes-docbench only.
        .target(name: "CAllocationCounter"),

        // Code only tests use: a WebSocket client over POSIX sockets (raw frames too), and an
        // in-process transport harness. Never a dependency of a shipped target.
        .target(name: "PanesTestSupport", dependencies: ["PanesTransport"], path: "Tests/PanesTestSupport",
                swiftSettings: swiftSettings),
        // Test-only: makes keys with the `openssl` command and signs tokens with libjwt, for the
        // security and end-to-end tests. Never linked into `panes`.
        .target(name: "PanesSecurityTestSupport", dependencies: ["PanesCore", "PanesJSON", "CJWT"],
                path: "Tests/PanesSecurityTestSupport", swiftSettings: swiftSettings),

        // Test-only C: calls lws's variadic `_lws_log` (Swift cannot) with an emitter that keeps
        // the calling thread's lines, for CLibWebSocketsLogTests. Never linked into `panes`.
        .target(name: "CLibWebSocketsLogTestSupport", dependencies: ["CLibWebSocketsLog", "CLibWebSockets"],
                path: "Tests/CLibWebSocketsLogTestSupport"),

        // Test-only: a fresh PostgreSQL database per test on the server in PANES_TEST_POSTGRES.
        .target(name: "PanesPostgresTestSupport", dependencies: ["PanesPostgres"],
                path: "Tests/PanesPostgresTestSupport", swiftSettings: swiftSettings),

        // Test-only: HubHarness, which drives a Hub the way the runtime does with exact time and
        // identifiers (TestClock), and reads its effects back.
        .target(name: "PanesCoreTestSupport", dependencies: ["PanesCore"],
                path: "Tests/PanesCoreTestSupport", swiftSettings: swiftSettings),
        // Test-only: the stores every conformance test runs against (StoreHarness: memory, SQLite,
        // PostgreSQL), temporary folders and fixture sessions.
        .target(name: "PanesStorageTestSupport",
                dependencies: ["PanesCore", "PanesStorage", "PanesPostgres", "PanesPostgresTestSupport"],
                path: "Tests/PanesStorageTestSupport", swiftSettings: swiftSettings),
        // Test-only: the real `panes` binary on an ephemeral port (ServerProcess) with a protocol
        // client on it, and a parser for its Prometheus metrics.
        .target(name: "PanesServerTestSupport",
                dependencies: ["PanesCore", "PanesJSON", "PanesPostgresTestSupport", "PanesTestSupport"],
                path: "Tests/PanesServerTestSupport", swiftSettings: swiftSettings),

        .testTarget(name: "PanesThreadsTests", dependencies: ["PanesThreads"], swiftSettings: swiftSettings),
        .testTarget(name: "PanesCoreTests", dependencies: ["PanesCore", "PanesCoreTestSupport"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "PanesJSONTests", dependencies: ["PanesJSON", "PanesCore"], swiftSettings: swiftSettings),
        .testTarget(name: "PanesStorageTests",
                    dependencies: ["PanesStorage", "PanesCore", "PanesSecurity", "PanesPostgres",
                                   "PanesPostgresTestSupport", "PanesStorageTestSupport"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "PanesSecurityTests",
                    dependencies: ["PanesSecurity", "PanesSecurityTestSupport", "PanesCore", "PanesJSON"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "PanesPostgresTests",
                    dependencies: ["PanesPostgres", "PanesPostgresTestSupport", "PanesCore", "PanesJSON"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "PanesWebhooksTests",
                    dependencies: ["PanesWebhooks", "PanesCore", "PanesJSON", "PanesStorage", "PanesPostgres",
                                   "PanesPostgresTestSupport", "PanesTestSupport",
                                   .product(name: "Logging", package: "swift-log")],
                    swiftSettings: swiftSettings),
        .testTarget(name: "CLibWebSocketsLogTests", dependencies: ["CLibWebSocketsLog", "CLibWebSocketsLogTestSupport"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "CLibWebSocketsAllocTests", dependencies: ["CLibWebSocketsAlloc"], swiftSettings: swiftSettings),
        .testTarget(name: "PanesTransportTests", dependencies: ["PanesTransport", "PanesTestSupport", "CLibWebSocketsAlloc"],
                    swiftSettings: swiftSettings),
        .testTarget(name: "PanesServerTests",
                    dependencies: ["PanesServer", "PanesCore", "PanesJSON", "PanesTransport", "PanesSecurity",
                                   "PanesSecurityTestSupport", "PanesTestSupport", "PanesPostgresTestSupport",
                                   "PanesServerTestSupport", "PanesStorage", "PanesPostgres"],
                    swiftSettings: swiftSettings),
    ]
)

// swift-tools-version:6.0
// IAPBridge: an in-app-purchase SDK for game engines, exported through a C ABI.
// No package dependencies: the Swift toolchain only.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
// The crash campaign's env-driven hooks (fault points, a lower compaction
// threshold: Sources/IAPCore/Storage/FaultPoints.swift) exist in debug builds only; a release build for the long
// campaign adds them with -Xswiftc -DIAP_TEST_HOOKS (scripts/campaign.sh).
let core: [SwiftSetting] = strict + [.define("IAP_TEST_HOOKS", .when(configuration: .debug))]

let package = Package(
    name: "IAPBridge",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15)],
    products: [
        // What a desktop engine or Mono loads (libIAPBridge.so / .dylib).
        .library(name: "IAPBridge", type: .dynamic, targets: ["IAPBridge"]),
        // What an Xcode project links (libIAPBridgeStatic.a).
        .library(name: "IAPBridgeStatic", type: .static, targets: ["IAPBridge"]),
        // What a Swift game links (SpriteKit, SwiftUI, Metal): `import IAPKit`,
        // typed calls and events on the same core, no C, no JSON.
        .library(name: "IAPBridgeSwift", targets: ["IAPKit"]),
        .executable(name: "iap-demo", targets: ["iap-demo"]),
    ],
    targets: [
        // Tiny C helpers the Swift code needs and the toolchain lacks portably (atomics).
        .target(name: "CIAPSupport", path: "Sources/CIAPSupport"),
        // The C ABI's per-frame entry written in C (iap_poll's empty path).
        .target(name: "CIAPFrame", dependencies: ["CIAPSupport"], path: "Sources/CIAPFrame"),
        // Platform-neutral engine: coordinator, outbox, messages, the Store protocol.
        .target(name: "IAPCore", dependencies: ["CIAPSupport"], swiftSettings: core),
        // The simulated App Store: reads Xcode .storekit catalogs, keeps durable state.
        .target(name: "IAPSimulator", dependencies: ["IAPCore"], swiftSettings: strict),
        // Test-only: the StoreKit 2 declarations the StoreKit backend uses, mirrored
        // from Apple's interface text, with scriptable behaviour (Linux only).
        .target(name: "StoreKitStandIn", swiftSettings: strict),
        // The StoreKit 2 backend: real StoreKit on Apple platforms, the stand-in on Linux.
        .target(
            name: "IAPStoreKit",
            dependencies: ["IAPCore", .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux]))],
            swiftSettings: strict),
        // Which store a config names: shared by the C ABI and the Swift API.
        .target(
            name: "IAPStores",
            dependencies: ["IAPCore", "IAPSimulator",
                           .target(name: "IAPStoreKit", condition: .when(platforms: [.iOS, .macOS, .tvOS]))],
            swiftSettings: strict),
        // The @_cdecl layer: marshalling only.
        .target(
            name: "IAPBridge",
            dependencies: ["IAPCore", "IAPSimulator", "IAPStores", "CIAPSupport", "CIAPFrame"],
            swiftSettings: strict),
        // The Swift API (README "Swift games"): the bridge for Swift games.
        .target(
            name: "IAPKit",
            dependencies: ["IAPCore", "IAPSimulator", "IAPStores"],
            swiftSettings: strict),

        // The demo: a C console game on the simulated store (README's first command).
        .executableTarget(
            name: "iap-demo", dependencies: ["IAPBridge"], path: "samples/c-demo",
            cSettings: [.headerSearchPath("../../include"), .headerSearchPath("../c-common")]),
        // The lifecycle demo: subscriptions, Ask to Buy, refunds.
        .executableTarget(
            name: "iap-lifecycle-demo", dependencies: ["IAPBridge"], path: "samples/c-lifecycle",
            cSettings: [.headerSearchPath("../../include"), .headerSearchPath("../c-common")]),
        // The C test harness: drives the real C ABI from C; run by the Swift test suite.
        .executableTarget(
            name: "iap-c-harness", dependencies: ["IAPBridge"], path: "Tests/c-harness",
            cSettings: [.headerSearchPath("../../include"), .headerSearchPath("../../samples/c-common")]),
        // Thread and descriptor exhaustion at every entry point (C8): it
        // interposes pthread_create; run by the Swift test suite.
        .executableTarget(
            name: "iap-exhaustion", dependencies: ["IAPBridge"], path: "Tests/exhaustion",
            cSettings: [.headerSearchPath("../../include"), .headerSearchPath("../../samples/c-common")],
            linkerSettings: [.linkedLibrary("dl")]),
        // The benchmark (scripts/bench.sh, BENCHMARKS.md): loads the built
        // libIAPBridge.so with dlopen, so it links nothing of the SDK.
        .executableTarget(
            name: "iap-bench", path: "Benchmarks/iap-bench",
            cSettings: [.headerSearchPath("../../include")]),

        // The SDK's share of an open with N results pending, outbox format 2
        // against format 1 (BENCHMARKS.md, "Outbox format 2").
        .executableTarget(
            name: "iap-outbox-bench", dependencies: ["IAPCore"], path: "Benchmarks/outbox-open", swiftSettings: strict),

        // Hardening (docs/HARDENING.md): a small C driver the sanitizer and
        // valgrind scripts run; the fuzz targets (Fuzz/) are built only by scripts/fuzz.sh.
        .executableTarget(
            name: "iap-hardening-driver", dependencies: ["IAPBridge"], path: "Tests/hardening-driver",
            cSettings: [.headerSearchPath("../../include"), .headerSearchPath("../../samples/c-common")]),
        // Test-only, in no product: the simulated disk (fault plans, the
        // power-loss journal) tests hand the outbox instead of real storage.
        .target(name: "IAPTestSupport", dependencies: ["IAPCore"], swiftSettings: strict),
        // The bad-input matrix, the concurrency stress, JSON round trips, file-system safety.
        .testTarget(
            name: "HardeningTests", dependencies: ["IAPCore", "IAPSimulator", "IAPBridge", "CIAPFrame", "IAPTestSupport"],
            swiftSettings: strict),

        // The crash campaign (scripts/campaign.sh, docs/DURABILITY.md): a C game
        // on the C ABI, and the driver that kills it and checks its books.
        .executableTarget(
            name: "iap-crash-game", dependencies: ["IAPBridge"], path: "Tests/crash-campaign/game",
            cSettings: [.headerSearchPath("../../../include"), .headerSearchPath("../../../samples/c-common")]),
        .executableTarget(
            name: "iap-crash-campaign", dependencies: ["IAPCore", "IAPSimulator", "IAPTestSupport"], path: "Tests/crash-campaign/driver",
            swiftSettings: strict),
        // Durability: byte-damage sweep, crash-shaped contract tests (docs/DURABILITY.md).
        .testTarget(
            name: "DurabilityTests", dependencies: ["IAPCore", "IAPSimulator", "IAPTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "IAPCoreTests", dependencies: ["IAPCore", "IAPSimulator", "IAPBridge", "IAPTestSupport"],
            swiftSettings: strict),
        // The Swift API's example game (README "Swift games", compiled on every build).
        .executableTarget(
            name: "iap-swift-demo", dependencies: ["IAPKit"], path: "samples/swift-demo", swiftSettings: strict),
        // A Swift game the IAPKit tests kill with SIGKILL before it confirms.
        .executableTarget(
            name: "iap-swift-crash-game", dependencies: ["IAPKit"], path: "Tests/swift-crash-game", swiftSettings: strict),
        // The Swift API: typed events, keys kept across crashes, typed errors.
        .testTarget(name: "IAPKitTests", dependencies: ["IAPKit", "IAPCore"], swiftSettings: strict),
        // C1-C8 against the simulator and the StoreKit backend over the stand-in.
        .testTarget(
            name: "ContractTests",
            dependencies: ["IAPCore", "IAPSimulator", "IAPBridge", "IAPStoreKit",
                           .target(name: "StoreKitStandIn", condition: .when(platforms: [.linux]))],
            swiftSettings: strict),
    ]
)

// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The O(n) invariant walks after every lock hold of the engine, for the tests and CI:
/// `SWIFTYCACHE_INTERNAL_CHECKS=1 swift test`. Never defined for a package that depends on this
/// one (it does not set the variable), so an app's debug build pays only for O(1) checks.
let internalChecks: [SwiftSetting] =
    ["", "0"].contains(Context.environment["SWIFTYCACHE_INTERNAL_CHECKS"] ?? "")
    ? [] : [.define("SWIFTYCACHE_INTERNAL_CHECKS", .when(configuration: .debug))]

let package = Package(
    name: "SwiftyCache",
    // The Synchronization module's `Atomic` (the memory tier's lock-free reads) sets the Apple floor.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SwiftyCacheCore", targets: ["SwiftyCacheCore"]),
        .library(name: "SwiftyCacheCodable", targets: ["SwiftyCacheCodable"]),
        .library(name: "SwiftyCacheSecureCoding", targets: ["SwiftyCacheSecureCoding"]),
        .executable(name: "notes-offline", targets: ["notes-offline"]),
        .executable(name: "swiftycache-bench", targets: ["swiftycache-bench"]),
        .executable(name: "journal-fuzzer", targets: ["journal-fuzzer"]),
        .executable(name: "packed-fuzzer", targets: ["packed-fuzzer"]),
        .executable(name: "json-fuzzer", targets: ["json-fuzzer"]),
    ],
    targets: [
        .target(name: "SwiftyCacheCore", swiftSettings: strictSettings + internalChecks),
        .target(name: "SwiftyCacheCodable", dependencies: ["SwiftyCacheCore"], swiftSettings: strictSettings),
        // NSSecureCoding values need Foundation's keyed archiver (full Foundation): a product of
        // their own, so that SwiftyCacheCodable stays on FoundationEssentials.
        .target(
            name: "SwiftyCacheSecureCoding", dependencies: ["SwiftyCacheCodable", "SwiftyCacheCore"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "notes-offline",
            dependencies: ["SwiftyCacheCodable", "SwiftyCacheCore"],
            path: "Examples/NotesOffline",
            resources: [.copy("Samples")],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "swiftycache-bench",
            dependencies: ["SwiftyCacheCodable", "SwiftyCacheCore"],
            path: "Benchmarks/SwiftyCacheBench",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "journal-fuzzer",
            dependencies: ["SwiftyCacheCore"],
            path: "Fuzz/JournalFuzzer",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "packed-fuzzer",
            dependencies: ["SwiftyCacheCore"],
            path: "Fuzz/PackedFuzzer",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "json-fuzzer",
            dependencies: ["SwiftyCacheCodable", "SwiftyCacheTestSupport"],
            path: "Fuzz/JSONFuzzer",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "swiftycache-crash-worker",
            dependencies: ["SwiftyCacheCore", "SwiftyCacheCodable", "SwiftyCacheTestSupport"],
            path: "Tests/CrashWorker",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SwiftyCacheTestSupport",
            dependencies: ["SwiftyCacheCore"],
            path: "Tests/SwiftyCacheTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SwiftyCacheCodableTests",
            dependencies: [
                "SwiftyCacheCodable", "SwiftyCacheCore", "SwiftyCacheSecureCoding", "SwiftyCacheTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "NotesOfflineTests",
            dependencies: ["notes-offline", "SwiftyCacheCore", "SwiftyCacheTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "swiftycache-crash-worker", "SwiftyCacheCore", "SwiftyCacheCodable", "SwiftyCacheTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SwiftyCacheCoreTests",
            dependencies: ["SwiftyCacheCore", "SwiftyCacheTestSupport"],
            swiftSettings: strictSettings + internalChecks
        ),
    ],
    swiftLanguageModes: [.v6]
)

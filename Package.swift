// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SwiftyCache",
    // `Mutex` from the Synchronization module sets the Apple floor.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SwiftyCacheCore", targets: ["SwiftyCacheCore"]),
        .library(name: "SwiftyCacheCodable", targets: ["SwiftyCacheCodable"]),
        .executable(name: "notes-offline", targets: ["notes-offline"]),
        .executable(name: "swiftycache-bench", targets: ["swiftycache-bench"]),
        .executable(name: "journal-fuzzer", targets: ["journal-fuzzer"]),
        .executable(name: "packed-fuzzer", targets: ["packed-fuzzer"]),
    ],
    targets: [
        .target(name: "SwiftyCacheCore", swiftSettings: strictSettings),
        .target(name: "SwiftyCacheCodable", dependencies: ["SwiftyCacheCore"], swiftSettings: strictSettings),
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
            name: "swiftycache-crash-worker",
            dependencies: ["SwiftyCacheCore", "SwiftyCacheTestSupport"],
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
            dependencies: ["SwiftyCacheCodable", "SwiftyCacheCore", "SwiftyCacheTestSupport"],
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
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

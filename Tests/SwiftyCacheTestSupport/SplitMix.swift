public import Foundation

/// A small deterministic random number generator (SplitMix64), so tests can replay a sequence.
public struct SplitMix: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The path of an executable product built beside the test bundle (a test target that depends on
/// it makes `swift test` build it), falling back to `.build/debug/NAME` in the package.
public func builtExecutable(_ name: String, packageRoot: URL) -> URL {
    let beside = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    for directory in [beside, beside.deletingLastPathComponent()] {
        let candidate = directory.appending(path: name)
        if FileManager.default.isExecutableFile(atPath: candidate.path(percentEncoded: false)) { return candidate }
    }
    return packageRoot.appending(path: ".build/debug/\(name)")
}

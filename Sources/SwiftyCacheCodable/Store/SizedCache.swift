import SwiftyCacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the store needs of a cache whatever its types.
protocol SizedCache: Sendable {
    var diskSize: Int { get }
    func removeAll() throws
}

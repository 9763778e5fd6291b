import Foundation

/// The classes an archive may hold: the cache's value class, the ones its user allowed, and
/// Foundation's property-list classes.
///
/// `@unchecked Sendable`: both stored properties are `let`s set in `init` and never mutated;
/// the array holds class metatypes, which are immutable, process-wide values.
struct AllowedClasses: @unchecked Sendable {
    /// What `NSKeyedUnarchiver` is given.
    let classes: [AnyClass]
    /// The names an archive's class entries may carry.
    let names: Set<String>

    /// Foundation's classes that property-list values archive as.
    static let foundation: [AnyClass] = [
        NSString.self, NSMutableString.self, NSNumber.self, NSData.self, NSMutableData.self, NSDate.self,
        NSArray.self, NSMutableArray.self, NSDictionary.self, NSMutableDictionary.self, NSSet.self,
        NSMutableSet.self, NSURL.self, NSUUID.self, NSNull.self,
    ]

    init(_ classes: [AnyClass]) {
        self.classes = classes + Self.foundation
        self.names = Set(self.classes.map { NSStringFromClass($0) })
    }
}

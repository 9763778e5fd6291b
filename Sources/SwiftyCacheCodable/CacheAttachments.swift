#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A value with large binary parts (an image, an audio clip) that an ``ObjectCache`` stores as
/// raw bytes in slots of their own, rather than base64 inside the encoded value.
///
/// Leave the binary properties out of the type's `CodingKeys`, and hand them over here:
///
/// ```swift
/// struct VoiceNote: Codable, Sendable, CacheAttachments {
///     var title: String
///     var audio = Data()                                 // not in CodingKeys
///     enum CodingKeys: String, CodingKey { case title }
///
///     static let attachmentCount = 1
///     var attachments: [Data] { [audio] }
///     mutating func restoreAttachments(_ parts: [Data]) { audio = parts[0] }
/// }
/// ```
///
/// ``ObjectCache/attachment(_:forKey:)-9n252`` reads one part without decoding the rest.
public protocol CacheAttachments {
    /// How many raw parts every value has. Fixed per type: it sets the engine's slot count.
    static var attachmentCount: Int { get }
    /// The raw parts, `attachmentCount` of them.
    var attachments: [Data] { get }
    /// Puts the raw parts back into a freshly decoded value.
    mutating func restoreAttachments(_ parts: [Data])
}

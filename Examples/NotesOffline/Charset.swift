import Foundation

/// Decodes a page's bytes with the charset it declares: the `Content-Type` header's, then a
/// `<meta charset>` in the first kilobytes, then UTF-8, then Latin-1 (which decodes anything).
enum Charset {
    static func decode(_ data: Data, contentType: String) -> String {
        var candidates: [String.Encoding] = []
        if let declared = parameter("charset", in: contentType).flatMap(encoding(named:)) {
            candidates.append(declared)
        }
        if let meta = metaCharset(in: data).flatMap(encoding(named:)) { candidates.append(meta) }
        candidates += [.utf8, .isoLatin1]
        for encoding in candidates {
            if let text = String(data: data, encoding: encoding) { return text }
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `charset` of `text/html; charset=ISO-8859-1`.
    static func parameter(_ name: String, in contentType: String) -> String? {
        for part in contentType.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == name {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            }
        }
        return nil
    }

    /// The charset a `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">` names.
    static func metaCharset(in data: Data) -> String? {
        let head = String(decoding: data.prefix(4096), as: UTF8.self).lowercased()
        guard let range = head.range(of: "charset=") else { return nil }
        let rest = head[range.upperBound...].drop { $0 == "\"" || $0 == "'" || $0 == " " }
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }

    /// The encoding of an IANA charset name; `nil` for one this tool does not know.
    static func encoding(named name: String) -> String.Encoding? {
        switch name.lowercased() {
        case "utf-8", "utf8": .utf8
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1": .isoLatin1
        case "windows-1252", "cp1252": .windowsCP1252
        case "us-ascii", "ascii": .ascii
        case "iso-8859-2", "latin2": .isoLatin2
        case "utf-16": .utf16
        case "utf-16le": .utf16LittleEndian
        case "utf-16be": .utf16BigEndian
        case "shift_jis", "shift-jis", "sjis": .shiftJIS
        case "euc-jp": .japaneseEUC
        default: nil
        }
    }
}

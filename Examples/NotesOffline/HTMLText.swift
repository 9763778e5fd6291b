import Foundation

/// The little HTML handling the example needs: a title, the links, readable text, and the
/// character references of HTML5.
enum HTMLText {
    /// The text of the `<title>` element; `nil` when there is none.
    static func title(of body: String) -> String? {
        firstElement("title", in: body)
    }

    /// The targets of the links a reader follows, in order, without duplicates or fragments:
    /// the `href` of `<a>` and `<area>` elements. Other elements' `href` (a stylesheet's
    /// `<link>`, a `<base>`) and attributes whose name only contains `href` (`hreflang`,
    /// `data-href`) are not links to pages.
    ///
    /// - Complexity: O(n), one pass over the tags.
    static func links(in body: String) -> [String] {
        var links: [String] = []
        var seen = Set<String>()
        var rest = body[...]
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            let name = rest.prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }.lowercased()
            rest = rest.dropFirst(name.count)
            let (attributes, end) = tagAttributes(rest)
            rest = rest[end...]
            guard name == "a" || name == "area", let href = attributes["href"] else { continue }
            let link = String(href.split(separator: "#", omittingEmptySubsequences: false).first ?? "")
            if !link.isEmpty, seen.insert(link).inserted { links.append(decodeEntities(link)) }
        }
        return links
    }

    /// The attributes of a tag whose name has been read (lower-cased names; the first of a
    /// repeated name wins, as in HTML), and where the tag ends.
    private static func tagAttributes(_ tag: Substring) -> (attributes: [String: String], end: Substring.Index) {
        var attributes: [String: String] = [:]
        var rest = tag
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "/" }
            guard let first = rest.first, first != ">" else { break }
            let name = rest.prefix { !$0.isWhitespace && $0 != "=" && $0 != ">" && $0 != "/" }
            rest = rest.dropFirst(max(name.count, 1)).drop { $0.isWhitespace }
            var value = ""
            if rest.first == "=" {
                rest = rest.dropFirst().drop { $0.isWhitespace }
                if let quote = rest.first, quote == "\"" || quote == "'" {
                    let inner = rest.dropFirst()
                    let close = inner.firstIndex(of: quote) ?? inner.endIndex
                    value = String(inner[..<close])
                    rest = close < inner.endIndex ? inner[inner.index(after: close)...] : inner[close...]
                } else {
                    let unquoted = rest.prefix { !$0.isWhitespace && $0 != ">" }
                    value = String(unquoted)
                    rest = rest.dropFirst(unquoted.count)
                }
            }
            let key = name.lowercased()
            if !key.isEmpty, attributes[key] == nil { attributes[key] = value }
        }
        return (attributes, rest.startIndex)
    }

    /// The text of a page: tags dropped, block ends as line breaks, entities decoded.
    static func plainText(of body: String) -> String {
        var text = ""
        var inTag = false
        var tag = ""
        var skipping = false
        for character in body {
            if inTag {
                if character == ">" {
                    inTag = false
                    let name = tag.lowercased().split(separator: " ").first.map(String.init) ?? ""
                    if ["script", "style", "title"].contains(name) { skipping = true }
                    if ["/script", "/style", "/title"].contains(name) { skipping = false }
                    if ["p", "/p", "br", "br/", "li", "/h1", "/h2", "/h3", "/h4", "div", "/div", "tr"].contains(name) {
                        text += "\n"
                    }
                } else {
                    tag.append(character)
                }
            } else if character == "<" {
                inTag = true
                tag = ""
            } else if !skipping {
                text.append(character)
            }
        }
        let lines = decodeEntities(text).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        var result: [String] = []
        for line in lines where !(line.isEmpty && (result.last?.isEmpty ?? true)) { result.append(line) }
        return result.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Replaces character references: every HTML5 named one (`&eacute;`, `&mdash;`, and the
    /// legacy names without `;`) and numeric ones (`&#233;`, `&#xE9;`). Anything else is kept.
    ///
    /// - Complexity: O(n): each `&` looks ahead at most 32 characters.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let (decoded, length) = reference(at: after) {
                result += decoded
                rest = after.dropFirst(length)
            } else {
                result += "&"
                rest = after
            }
        }
        result += rest
        return result
    }

    /// The reference at the start of `text` (just after `&`) and its length, or `nil`.
    private static func reference(at text: Substring) -> (String, Int)? {
        if text.first == "#" {
            let isHex = text.dropFirst().first.map { $0 == "x" || $0 == "X" } ?? false
            let digits = text.dropFirst(isHex ? 2 : 1).prefix { isHex ? $0.isHexDigit : $0.isNumber }.prefix(8)
            guard !digits.isEmpty, let value = UInt32(digits, radix: isHex ? 16 : 10) else { return nil }
            var length = (isHex ? 2 : 1) + digits.count
            if text.dropFirst(length).first == ";" { length += 1 }
            // The replacement character for NUL, surrogates and values past Unicode, as browsers do.
            let scalar = value == 0 ? nil : Unicode.Scalar(value)
            return (String(Character(scalar ?? "\u{FFFD}")), length)
        }
        let name = text.prefix { $0.isLetter || $0.isNumber }.prefix(32)
        guard !name.isEmpty else { return nil }
        if text.dropFirst(name.count).first == ";", let value = entities[name + ";"] {
            return (value, name.count + 1)
        }
        // Legacy references may omit the `;`: the longest such name that prefixes the text.
        for length in stride(from: name.count, through: 2, by: -1) {
            if let value = entities[String(name.prefix(length))] { return (value, length) }
        }
        return nil
    }

    /// The HTML5 table, parsed on first use from ``HTMLEntityTable``.
    private static let entities: [String: String] = {
        var table: [String: String] = [:]
        table.reserveCapacity(HTMLEntityTable.count)
        for line in HTMLEntityTable.text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let scalars = line[line.index(after: equals)...].split(separator: " ").compactMap {
                UInt32($0, radix: 16).flatMap(Unicode.Scalar.init)
            }
            var value = ""
            value.unicodeScalars.append(contentsOf: scalars)
            table[String(line[..<equals])] = value
        }
        return table
    }()

    private static func firstElement(_ name: String, in body: String) -> String? {
        guard let open = body.range(of: "<\(name)", options: .caseInsensitive),
            let close = body[open.upperBound...].firstIndex(of: ">"),
            let end = body[close...].range(of: "</\(name)>", options: .caseInsensitive)
        else { return nil }
        let text = plainText(of: String(body[body.index(after: close)..<end.lowerBound]))
        return text.isEmpty ? nil : text
    }
}

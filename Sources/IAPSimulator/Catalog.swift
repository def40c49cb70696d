import IAPCore

/// A product of an Xcode `.storekit` configuration.
public struct CatalogProduct: Sendable, Equatable {
    public var id: String
    public var kind: ProductKind
    /// Decimal text as in the file, e.g. "0.99".
    public var price: String
    public var familyShareable: Bool
    public var referenceName: String
    /// (locale, displayName, description), in file order.
    public var localizations: [(locale: String, title: String, description: String)]
    public var subscriptionPeriod: String?
    public var subscriptionGroupID: String?
    public var groupNumber: Int?
    /// The introductory offer's terms (what a first subscription in the
    /// group is charged and for how long): read once, so the offer the
    /// `"999"` lists is the one a purchase is charged.
    public var introTerms: CatalogOffer? = nil
    /// The `"999"`'s `introductoryOffer`.
    public var introductoryOffer: JSONValue? { introTerms?.json }
    /// The win-back offers (`winbackOffers`).
    public var winBackOffers: [CatalogOffer] = []

    public static func == (a: CatalogProduct, b: CatalogProduct) -> Bool {
        a.id == b.id && a.kind == b.kind && a.price == b.price && a.subscriptionPeriod == b.subscriptionPeriod
    }
}

/// The `settings` block of a `.storekit` file, the parts the simulator uses.
public struct CatalogSettings: Sendable {
    public var askToBuy = false
    public var failTransactions = false
    /// Xcode's `_timeRate`: 0 is real time; others speed the store's clock.
    public var timeRate = 0
    public var storefront = "USA"
    public var locale = "en_US"
    /// `_billingGracePeriodEnabled`: a renewal whose payment fails keeps
    /// the player subscribed for a grace period (billing_issue).
    public var billingGracePeriod = false
    /// Enabled entries of `_storeKitErrors`: (API name, error type).
    public var storeKitErrors: [(name: String, type: String)] = []

    /// The first enabled error whose API name contains `word` (lowercase
    /// ASCII), ignoring case: Xcode names them "Load Products", "Purchase",
    /// "App Store Sync"... Compared byte by byte: `StringProtocol.contains`
    /// is iOS 16 / macOS 13 and the package runs on iOS 15 (issue 20).
    public func storeKitError(forAPI word: String) -> (name: String, type: String)? {
        let needle = Array(word.utf8)
        return storeKitErrors.first { e in
            let hay = Array(e.name.lowercased().utf8)
            guard hay.count >= needle.count else { return false }
            return (0...(hay.count - needle.count)).contains { hay[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
    }
}

/// An Xcode StoreKit configuration file (format versions 1 to 5 seen in the
/// wild). Keys it does not use are ignored; malformed ones are errors.
public struct Catalog: Sendable {
    public var identifier: String
    public var products: [CatalogProduct]
    public var settings: CatalogSettings
    public var version: String

    public static let maxFileBytes = 16 * 1024 * 1024

    public func product(_ id: String) -> CatalogProduct? { products.first { $0.id == id } }

    public static func load(path: String) throws(IAPError) -> Catalog {
        guard !path.isEmpty else { throw IAPError(.catalog, "catalog path is empty") }
        let bytes: [UInt8]?
        do { bytes = try POSIX.readFile(path, limit: maxFileBytes) } catch {
            throw IAPError(.catalog, "cannot read catalog \(path): \(error.message)")
        }
        guard let bytes else {
            throw IAPError(.catalog, path.hasPrefix("/") ? "catalog \(path) does not exist"
                : "catalog \(path) does not exist in the working directory \(POSIX.currentDirectory ?? "(unknown)") (a relative catalog path is read from there; prefer an absolute one)")
        }
        return try parse(bytes, name: path)
    }

    public static func parse(_ bytes: [UInt8], name: String = "catalog") throws(IAPError) -> Catalog {
        let root: JSONValue
        do { root = try JSONParser.parse(bytes: bytes) } catch {
            throw IAPError(.catalog, "\(name) is not valid JSON: \(error)")
        }
        guard let top = root.objectValue else { throw IAPError(.catalog, "\(name): top level must be an object") }
        var products: [CatalogProduct] = []
        func fail(_ s: String) -> IAPError { IAPError(.catalog, "\(name): \(s)") }

        func list(_ key: String, in o: [String: JSONValue]) throws(IAPError) -> [JSONValue] {
            guard let v = o[key], !v.isNull else { return [] }
            guard let a = v.arrayValue else { throw fail("\"\(key)\" must be an array") }
            return a
        }

        for v in try list("products", in: top) { products.append(try product(v, fail: fail)) }
        for v in try list("nonRenewingSubscriptions", in: top) {
            var p = try product(v, fail: fail)
            p.kind = .nonRenewingSubscription
            products.append(p)
        }
        for g in try list("subscriptionGroups", in: top) {
            guard let go = g.objectValue else { throw fail("a subscription group must be an object") }
            let groupID = go["id"]?.stringValue
            for s in try list("subscriptions", in: go) {
                var p = try product(s, fail: fail)
                p.kind = .autoRenewableSubscription
                if p.subscriptionGroupID == nil { p.subscriptionGroupID = groupID }
                guard p.subscriptionPeriod != nil else { throw fail("subscription \(p.id) has no recurringSubscriptionPeriod") }
                products.append(p)
            }
        }
        var seen = Set<String>()
        for p in products where !seen.insert(p.id).inserted { throw fail("product ID \(p.id) appears twice") }

        var settings = CatalogSettings()
        if let s = top["settings"], !s.isNull {
            guard let so = s.objectValue else { throw fail("\"settings\" must be an object") }
            if let b = so["_askToBuyEnabled"]?.boolValue { settings.askToBuy = b }
            if let b = so["_failTransactionsEnabled"]?.boolValue { settings.failTransactions = b }
            if let r = so["_timeRate"]?.int64Value { settings.timeRate = Int(clamping: r) }
            if let f = so["_storefront"]?.stringValue, !f.isEmpty { settings.storefront = f }
            if let l = so["_locale"]?.stringValue, !l.isEmpty { settings.locale = l }
            if let b = so["_billingGracePeriodEnabled"]?.boolValue { settings.billingGracePeriod = b }
            if let errs = so["_storeKitErrors"]?.arrayValue {
                for e in errs {
                    guard let eo = e.objectValue, eo["enabled"]?.boolValue == true else { continue }
                    let type = eo["current"]?["type"]?.stringValue ?? eo["current"]?.stringValue ?? "generic"
                    settings.storeKitErrors.append((eo["name"]?.stringValue ?? "", type))
                }
            }
        }
        var version = "1.0"
        if let v = top["version"]?.objectValue {
            version = "\(v["major"]?.int64Value ?? 1).\(v["minor"]?.int64Value ?? 0)"
        }
        return Catalog(identifier: top["identifier"]?.stringValue ?? "", products: products, settings: settings, version: version)
    }

    private static func product(_ v: JSONValue, fail: (String) -> IAPError) throws(IAPError) -> CatalogProduct {
        guard let o = v.objectValue else { throw fail("a product must be an object") }
        guard let id = o["productID"]?.stringValue, !id.isEmpty else { throw fail("a product has no \"productID\"") }
        guard id.utf8.count <= 256 else { throw fail("product ID longer than 256 bytes") }
        let kind: ProductKind
        switch o["type"]?.stringValue {
        case "Consumable": kind = .consumable
        case "NonConsumable": kind = .nonConsumable
        case "NonRenewingSubscription": kind = .nonRenewingSubscription
        case "RecurringSubscription", "AutoRenewableSubscription": kind = .autoRenewableSubscription
        case let other: throw fail("product \(id) has unknown type \(other.map { "\"\($0)\"" } ?? "(missing)")")
        }
        guard let priceText = o["displayPrice"]?.stringValue ?? o["displayPrice"].flatMap({ v -> String? in
            if case .number(let n) = v { return n } else { return nil }
        }) else { throw fail("product \(id) has no \"displayPrice\"") }
        guard let price = Price.normalize(priceText) else { throw fail("product \(id) has price \"\(priceText)\", not a decimal number") }
        var locs: [(String, String, String)] = []
        if let ls = o["localizations"]?.arrayValue {
            for l in ls {
                guard let lo = l.objectValue else { throw fail("product \(id): a localization must be an object") }
                locs.append((lo["locale"]?.stringValue ?? "", lo["displayName"]?.stringValue ?? "", lo["description"]?.stringValue ?? ""))
            }
        }
        let introObject = o["introductoryOffer"]?.objectValue ?? o["introductoryOffers"]?.arrayValue?.first?.objectValue
        let winBackObjects = (o["winbackOffers"]?.arrayValue ?? o["winBackOffers"]?.arrayValue ?? []).compactMap(\.objectValue)
        for offer in [introObject].compactMap({ $0 }) + winBackObjects {
            if let problem = CatalogOffer.priceProblem(offer) { throw fail("product \(id): \(problem)") }
        }
        let winBacks = winBackObjects.compactMap { CatalogOffer.read($0, kind: .winBack) }
        let period = o["recurringSubscriptionPeriod"]?.stringValue
        if let period, ISODuration(period) == nil { throw fail("product \(id) has period \"\(period)\", not an ISO 8601 duration") }
        var product = CatalogProduct(
            id: id, kind: kind, price: price, familyShareable: o["familyShareable"]?.boolValue ?? false,
            referenceName: o["referenceName"]?.stringValue ?? id, localizations: locs,
            subscriptionPeriod: period, subscriptionGroupID: o["subscriptionGroupID"]?.stringValue,
            groupNumber: o["groupNumber"]?.int64Value.map { Int(clamping: $0) })
        if kind == .autoRenewableSubscription {
            product.introTerms = introObject.flatMap { CatalogOffer.read($0, kind: .introductory) }
            product.winBackOffers = winBacks
        }
        return product
    }

    /// Title and description in `locale`, then its language, then the first one.
    public func localized(_ p: CatalogProduct) -> (title: String, description: String) {
        let loc = settings.locale
        let lang = loc.split(separator: "_").first.map(String.init) ?? loc
        let pick = p.localizations.first { $0.locale == loc }
            ?? p.localizations.first { $0.locale.split(separator: "_").first.map(String.init) == lang }
            ?? p.localizations.first
        guard let pick else { return (p.referenceName, "") }
        return (pick.title.isEmpty ? p.referenceName : pick.title, pick.description)
    }
}

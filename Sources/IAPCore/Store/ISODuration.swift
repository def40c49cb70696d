/// An ISO 8601 duration as subscriptions use it: P1W, P1M, P3M, P1Y, P3D.
public struct ISODuration: Sendable, Equatable {
    public var years = 0, months = 0, days = 0

    public init?(_ text: String) {
        guard text.utf8.count <= 32 else { return nil }
        var s = Substring(text)
        guard s.first == "P" else { return nil }
        s = s.dropFirst()
        var num = 0
        var any = false
        var digits = 0
        for c in s {
            if let d = c.wholeNumberValue, c.isASCII {
                num = num * 10 + d
                digits += 1
                guard digits <= 4 else { return nil }
                continue
            }
            guard digits > 0 else { return nil }
            switch c {
            case "Y": years += num
            case "M": months += num
            case "W": days += 7 * num
            case "D": days += num
            default: return nil
            }
            any = true
            num = 0
            digits = 0
        }
        guard any, digits == 0 else { return nil }
    }

    /// `ms` plus this duration, by calendar months/years (UTC, day clamped).
    public func added(to ms: Int64) -> Int64 {
        var t = ms + Int64(days) * 86_400_000
        let totalMonths = years * 12 + months
        guard totalMonths > 0 else { return t }
        let dayMs: Int64 = 86_400_000
        var dayNumber = t >= 0 ? t / dayMs : (t - dayMs + 1) / dayMs
        let within = t - dayNumber * dayMs
        var (y, m, d) = ISODuration.civil(fromDays: dayNumber)
        var mm = m - 1 + totalMonths
        y += mm / 12
        mm %= 12
        let maxDay = ISODuration.daysIn(year: y, month: mm + 1)
        d = min(d, maxDay)
        dayNumber = ISODuration.days(fromCivil: y, mm + 1, d)
        t = dayNumber * dayMs + within
        return t
    }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's civil-from-days and its inverse.
    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
    }

    static func days(fromCivil y0: Int, _ m: Int, _ d: Int) -> Int64 {
        let y = Int64(m <= 2 ? y0 - 1 : y0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(m > 2 ? m - 3 : m + 9)
        let doy = (153 * mp + 2) / 5 + Int64(d) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

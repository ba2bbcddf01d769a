package countries

// ferry: this file is not upstream's (see countries.go).

import "sync"

var (
	countriesOnce sync.Once
	countriesISO3 map[string]Country
	countriesISO2 map[string]Country
)

func buildCountries() {
	countriesISO3 = countriesISO3Literal()
	countriesISO2 = countriesISO2Literal()
}

// CountriesISO3 indexes ISO3166 countries by their alpha-3 code (upstream's
// CountriesISO3 map, built on first use).
func CountriesISO3() map[string]Country {
	countriesOnce.Do(buildCountries)
	return countriesISO3
}

// CountriesISO2 indexes ISO3166 countries by their alpha-2 code (upstream's
// CountriesISO2 map, built on first use).
func CountriesISO2() map[string]Country {
	countriesOnce.Do(buildCountries)
	return countriesISO2
}

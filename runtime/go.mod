module github.com/weftrt/weft/runtime

go 1.26

require (
	github.com/knadh/koanf/parsers/json v1.0.1
	github.com/knadh/koanf/parsers/toml/v2 v2.1.0
	github.com/knadh/koanf/parsers/yaml v1.1.1
	github.com/knadh/koanf/providers/confmap v1.0.1
	github.com/knadh/koanf/providers/file v1.2.1
	github.com/knadh/koanf/v2 v2.4.1
	github.com/stretchr/testify v1.12.1
	github.com/weftrt/weft/core v0.1.0
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.5
)

require (
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/pelletier/go-toml/v2 v2.2.2 // indirect
	golang.org/x/sys v0.32.0 // indirect
)

// Sibling modules, so the packages build and test on their own (GOWORK=off).
replace github.com/weftrt/weft/core => ../core

module go.opentelemetry.io/contrib/exporters/autoexport

go 1.25

require (
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.42.0
	go.opentelemetry.io/otel/sdk v1.45.0
)

package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// StreamFilters are the movies-stream event filters: Lambda invokes the
// stream processor only for records that match one of them; the others are
// dropped by the event source mapping and never delivered (nor retried).
//
// events.Derive produces an event only when the new image's status is
// tracing (started), when a job's terminal write turns a tracing row into
// traced or tracing_failed (completed, failed), or when a tracing lease is
// replaced (abandoned); the last two have status tracing in the old image,
// because only a live tracing lease's holder can publish the terminal state,
// and a tracing lease exists only with status tracing. So the filters are:
//
//  1. INSERT or MODIFY with NewImage.status = tracing;
//  2. MODIFY with OldImage.status = tracing;
//  3. INSERT with NewImage.status traced or tracing_failed (a row created
//     already finished, which Derive would report as completed/failed);
//  4. and 5. INSERT or MODIFY whose NewImage, or MODIFY whose OldImage, has a
//     calibration (its unit, one of domain.Units): a calibration set,
//     changed or removed (CalibrationSet, CalibrationCleared). Lambda's
//     filters cannot compare the two images, so on a calibrated movie every
//     write (heartbeats included) invokes the function, which derives
//     nothing from most of them: the cost of keeping calibrations in the
//     history, paid only by calibrated movies.
//
// Changes of uncalibrated movies that are not tracing before or after — analysis lease
// acquisition, heartbeats and release, marker/trim/interval edits, whether
// the movie is ready, traced or tracing_failed — match none of them: they are
// the bulk of the writes and never invoke the function. REMOVE records are
// dropped too (Derive returns nothing for a deleted row).
func StreamFilters() *[]*map[string]interface{} {
	status := func(values ...domain.Status) map[string]interface{} {
		return map[string]interface{}{schema.AttrStatus: map[string]interface{}{"S": awslambda.FilterRule_Or(*jsii.Strings(statusStrings(values)...)...)}}
	}
	return &[]*map[string]interface{}{
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("INSERT"), jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"NewImage": status(domain.StatusTracing)},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"OldImage": status(domain.StatusTracing)},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("INSERT")),
			"dynamodb":  map[string]interface{}{"NewImage": status(domain.StatusTraced, domain.StatusFailed)},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("INSERT"), jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"NewImage": calibrated()},
		}),
		awslambda.FilterCriteria_Filter(&map[string]interface{}{
			"eventName": awslambda.FilterRule_Or(jsii.String("MODIFY")),
			"dynamodb":  map[string]interface{}{"OldImage": calibrated()},
		}),
	}
}

// calibrated matches an image with a calibration: its unit is one of
// domain.Units (schema.CalibrationItem).
func calibrated() map[string]interface{} {
	units := make([]string, len(domain.Units))
	for i, u := range domain.Units {
		units[i] = string(u)
	}
	return map[string]interface{}{schema.AttrCalibration: map[string]interface{}{"M": map[string]interface{}{
		"unit": map[string]interface{}{"S": awslambda.FilterRule_Or(*jsii.Strings(units...)...)}}}}
}

func statusStrings(ss []domain.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

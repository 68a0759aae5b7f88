package dynamo

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// The translation of the domain's rule values into DynamoDB expressions.
// Each node of domain.Cond and each kind of domain.Assignment is translated
// here once, whatever command it comes from: the store restates no rule, so a
// new command needs no change in this package.

// attributes maps every domain field a rule may name to its attribute path.
var attributes = map[domain.Field]string{
	domain.FieldID:               schema.AttrMovieID,
	domain.FieldFrameCount:       schema.AttrFrameCount,
	domain.FieldStatus:           schema.AttrStatus,
	domain.FieldMarkers:          schema.AttrMarkers,
	domain.FieldTrimStart:        schema.AttrTrimStart,
	domain.FieldTrimEnd:          schema.AttrTrimEnd,
	domain.FieldCaptureInterval:  schema.AttrCaptureInterval,
	domain.FieldFramesWritten:    schema.AttrFramesWritten,
	domain.FieldTotalFrames:      schema.AttrTotalFrames,
	domain.FieldCleanBefore:      schema.AttrCleanBefore,
	domain.FieldLastJob:          schema.AttrLastJob,
	domain.FieldVersion:          schema.AttrVersion,
	domain.FieldUpdatedAt:        schema.AttrUpdatedAt,
	domain.FieldLease:            schema.AttrLease,
	domain.FieldLeaseKind:        schema.AttrLeaseKind,
	domain.FieldLeaseID:          schema.AttrLeaseID,
	domain.FieldLeaseUserID:      schema.AttrLeaseUserID,
	domain.FieldLeaseHeartbeatAt: schema.AttrLeaseHeartbeatAt,
	domain.FieldLeaseExpiresAt:   schema.AttrLeaseExpiresAt,
	domain.FieldLeaseClaimed:     schema.AttrLeaseClaimed,
	domain.FieldLeaseClaimToken:  schema.AttrLeaseClaimToken,
	domain.FieldLastJobID:        schema.AttrLastJobID,
	domain.FieldLastJobStatus:    schema.AttrLastJobStatus,
	domain.FieldLastJobSummary:   schema.AttrLastJobSummary,
	domain.FieldLeaseSegment:     schema.AttrLeaseSegment,
	domain.FieldLeasePlanFrom:    schema.AttrLeasePlanFrom,
	domain.FieldFrameRate:        schema.AttrFrameRate,
	domain.FieldVideo:            schema.AttrVideo,
	domain.FieldIngestFailure:    schema.AttrIngestFailure,
	domain.FieldUploadExpiresAt:  schema.AttrUploadExpiresAt,
	domain.FieldCalibration:      schema.AttrCalibration,
	domain.FieldKeys:             schema.AttrKeys,
	domain.FieldTitle:            schema.AttrTitle,
}

func name(f domain.Field) (expression.NameBuilder, error) {
	a, ok := attributes[f]
	if !ok {
		return expression.NameBuilder{}, fmt.Errorf("dynamo: no attribute for domain field %q", f)
	}
	return expression.Name(a), nil
}

// stored converts a domain value to the form the item schema stores it in
// (times as Unix milliseconds, nested records as their item structs).
//
// Times: for a stored (whole-millisecond) time E, now < E holds exactly when
// floor_ms(now) < E (and likewise for <=, >, >=), so comparing with the
// truncated now gives the domain's verdict on the untruncated one.
func stored(v any) any {
	switch v := v.(type) {
	case time.Time:
		return schema.Millis(v)
	case domain.Status:
		return string(v)
	case domain.LeaseKind:
		return string(v)
	case domain.Lease:
		return schema.NewLeaseItem(v)
	case domain.JobRecord:
		return schema.NewJobItem(v)
	case []domain.Marker:
		return schema.NewMarkerItems(v)
	case []domain.Key:
		return schema.NewKeyItems(v)
	case domain.Video:
		return schema.NewVideoItem(v)
	case domain.Calibration:
		return schema.NewCalibrationItem(v)
	}
	return v
}

func operand(o domain.Operand) (expression.OperandBuilder, error) {
	switch o := o.(type) {
	case domain.Field:
		return name(o)
	case domain.SizeOf:
		n, err := name(o.Field)
		return n.Size(), err
	case domain.Value:
		return expression.Value(stored(o.V)), nil
	}
	return nil, fmt.Errorf("dynamo: unknown operand %T", o)
}

// condition translates a domain condition.
func condition(c domain.Cond) (expression.ConditionBuilder, error) {
	switch c := c.(type) {
	case domain.And:
		return junction(c, expression.And, domain.Exists())
	case domain.Or:
		return junction(c, expression.Or, domain.Absent{Field: domain.FieldID})
	case domain.Not:
		inner, err := condition(c.C)
		return expression.Not(inner), err
	case domain.Present:
		n, err := name(c.Field)
		return n.AttributeExists(), err
	case domain.Absent:
		n, err := name(c.Field)
		return n.AttributeNotExists(), err
	case domain.Compare:
		l, err := operand(c.L)
		if err != nil {
			return expression.ConditionBuilder{}, err
		}
		r, err := operand(c.R)
		if err != nil {
			return expression.ConditionBuilder{}, err
		}
		cmp, ok := comparisons[c.Op]
		if !ok {
			return expression.ConditionBuilder{}, fmt.Errorf("dynamo: unknown operator %q", c.Op)
		}
		return cmp(l, r), nil
	}
	return expression.ConditionBuilder{}, fmt.Errorf("dynamo: unknown condition %T", c)
}

var comparisons = map[domain.Op]func(l, r expression.OperandBuilder) expression.ConditionBuilder{
	domain.OpEq: expression.Equal,
	domain.OpLt: expression.LessThan,
	domain.OpLe: expression.LessThanEqual,
	domain.OpGt: expression.GreaterThan,
	domain.OpGe: expression.GreaterThanEqual,
}

// junction translates And and Or. The SDK's builders need two operands: one
// condition stands for itself, and an empty one becomes a condition that is
// always (And) or never (Or) true on a stored movie: empty.
func junction(cs []domain.Cond, join func(l, r expression.ConditionBuilder, more ...expression.ConditionBuilder) expression.ConditionBuilder, empty domain.Cond) (expression.ConditionBuilder, error) {
	if len(cs) == 0 {
		return condition(empty)
	}
	out := make([]expression.ConditionBuilder, len(cs))
	for i, c := range cs {
		var err error
		if out[i], err = condition(c); err != nil {
			return expression.ConditionBuilder{}, err
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return join(out[0], out[1], out[2:]...), nil
}

// update translates a domain update.
func update(as []domain.Assignment) (expression.UpdateBuilder, error) {
	var u expression.UpdateBuilder
	for _, a := range as {
		n, err := name(a.Field)
		if err != nil {
			return u, err
		}
		switch a.Op {
		case domain.AssignSet:
			u = u.Set(n, expression.Value(stored(a.Value)))
		case domain.AssignRemove:
			u = u.Remove(n)
		case domain.AssignAdd:
			u = u.Add(n, expression.Value(a.Value))
		case domain.AssignCopy:
			src, ok := a.Value.(domain.Field)
			if !ok {
				return u, fmt.Errorf("dynamo: copy into %q from %T, not a field", a.Field, a.Value)
			}
			from, err := name(src)
			if err != nil {
				return u, err
			}
			u = u.Set(n, from) // SET a = b reads b as stored before the update
		default:
			return u, fmt.Errorf("dynamo: unknown assignment %q", a.Op)
		}
	}
	return u, nil
}

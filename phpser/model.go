package phpser

// ModelIdentifierClass is the class SerializesModels puts in place of an Eloquent
// model or collection.
const ModelIdentifierClass = `Illuminate\Contracts\Database\ModelIdentifier`

// ModelIdentifier is what Laravel's SerializesModels writes for a job property that
// holds an Eloquent model or collection: the worker re-queries the database with it.
//
// The property set grew over Laravel versions (5.6 added relations, 9.26 added
// collectionClass); absent properties stay zero. Marshal leaves collectionClass out
// when it is nil, which every version reads as null; laraq's Dispatcher writes it as
// the connection's release does (null from 9.26 on).
type ModelIdentifier struct {
	Class           string   `php:"class"`     // the model class, e.g. App\Models\User
	ID              any      `php:"id"`        // int64 or string key, or []any of keys for a collection
	Relations       []string `php:"relations"` // loaded relations to eager-load again
	Connection      *string  `php:"connection"`
	CollectionClass *string  `php:"collectionClass,omitempty"` // custom collection class, if any
}

// PHPClass returns ModelIdentifierClass.
func (ModelIdentifier) PHPClass() string { return ModelIdentifierClass }
